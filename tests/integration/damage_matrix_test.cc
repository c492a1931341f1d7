// The damage matrix: one history, each kind of damage done to a copy of it,
// and what cairnd, cairnd --verify and cairnd --repair do with each (the
// table in docs/operating.md, "Damaged stores").
//
// The history, with a real cairnd: a study and 600 trials, a clean stop
// (the restart flushes them into an SST), then 400 trials more acknowledged
// in four calls and a kill -9 at once, so that they are only in the WAL and
// newer than the durable mark's once-a-second recorder.
//
// Each damaged copy must either serve every acknowledged trial or refuse to
// start with one line naming the damaged file and the damage, changing no
// byte of the store. --verify must agree (exit 1 naming the same damage, or
// exit 0 and "store is intact"). --repair must exit 0, keep the damaged
// store aside byte for byte, recover at least what the table says, and
// leave a store that verifies clean and serves exactly the trials the
// repair reported, every one of them acknowledged.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "store/wal_format.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kFirst = 600;    // In an SST after the clean stop.
constexpr int kSecond = 400;   // Only in the WAL at the kill -9.
constexpr int kPerCall = 100;  // Trials one SuggestTrials call asks for.

// The files of `dir` whose names contain `part`, sorted.
std::vector<fs::path> FilesWith(const fs::path& dir, const std::string& part) {
  const std::vector<std::string> paths =
      testing::FilesContaining(dir.string(), part);
  return {paths.begin(), paths.end()};
}

// The bytes of the file at `path` (one read: a WAL is 18 MB).
std::string Bytes(const fs::path& path) {
  std::string bytes(fs::file_size(path), '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

// Every file of `dir` but LOCK (name -> bytes).
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == "LOCK") continue;
    out[e.path().filename().string()] = Bytes(e.path());
  }
  return out;
}

// Asks for `count` new trials in calls of kPerCall; adds their names.
void Suggest(const testing::CairndProcess& server, const std::string& study,
             int count, const std::string& client,
             std::set<std::string>* acknowledged) {
  for (int done = 0; done < count; done += kPerCall) {
    cairn::v1::SuggestTrialsRequest req;
    req.set_parent(study);
    req.set_suggestion_count(kPerCall);
    req.set_client_id(absl::StrCat(client, "-", done));
    cairn::v1::SuggestTrialsResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server.NewStub()->SuggestTrials(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.trials_size(), kPerCall);
    for (const auto& t : resp.trials()) acknowledged->insert(t.name());
  }
}

// The trials cairnd serves for `study` (none when the study is gone).
std::set<std::string> Served(const testing::CairndProcess& server,
                             const std::string& study) {
  std::set<std::string> names;
  std::string token;
  do {
    cairn::v1::ListTrialsRequest req;
    req.set_parent(study);
    req.set_page_token(token);
    cairn::v1::ListTrialsResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server.NewStub()->ListTrials(&ctx, req, &resp);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return names;
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (const auto& t : resp.trials()) names.insert(t.name());
    token = resp.next_page_token();
  } while (!token.empty());
  return names;
}

struct History {
  testing::TempDir root;
  std::string dir;        // The data dir after the kill -9.
  fs::path old_manifest;  // The MANIFEST of before the restart.
  std::string study;
  std::set<std::string> acknowledged;
  std::string error;  // Why the history could not be made.
};

void MakeHistory(History* h) {
  h->dir = h->root.path() + "/history";
  const fs::path store = fs::path(h->dir) / "store";
  {
    testing::CairndProcess server(h->dir);
    std::string error;
    ASSERT_TRUE(server.Start(&error)) << error;
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name("matrix");
    *req.mutable_study()->mutable_spec() = testing::BraninSpec();
    req.mutable_study()->mutable_spec()->set_algorithm(
        cairn::v1::StudySpec::RANDOM_SEARCH);
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    grpc::Status s = server.NewStub()->CreateStudy(&ctx, req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    h->study = out.name();
    Suggest(server, h->study, kFirst, "first", &h->acknowledged);
    ASSERT_EQ(server.Terminate(), 0) << server.Log(2000);
  }
  const fs::path manifest = FilesWith(store, "MANIFEST-").back();
  h->old_manifest = fs::path(h->root.path()) / manifest.filename();
  fs::copy_file(manifest, h->old_manifest);
  testing::CairndProcess server(h->dir);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  Suggest(server, h->study, kSecond, "second", &h->acknowledged);
  server.Kill9();
  ASSERT_EQ(h->acknowledged.size(), size_t{kFirst + kSecond});
  // What the damage needs: the first trials in SSTs, the others in one WAL.
  ASSERT_FALSE(FilesWith(store, ".sst").empty());
  ASSERT_EQ(FilesWith(store, ".log").size(), 1u);
  h->error.clear();
}

History* history = nullptr;  // Made once for the suite.

const History& TheHistory() { return *history; }

// One kind of damage and what it must lead to.
struct Case {
  std::string name;
  // Damages the store at `store`; returns the damaged file's name.
  std::function<std::string(const fs::path& store)> damage;
  // A refusal names the file and one of these kinds of damage.
  std::vector<std::string> kinds;
  // Whether cairnd must refuse (else it may also serve every trial).
  bool must_refuse;
  int min_repaired;  // Trials --repair recovers at least.
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << c.name;
}

std::string OnlyWal(const fs::path& store) {
  return FilesWith(store, ".log").back().filename().string();
}

// Where to cut the WAL at `wal` in the middle of a record: halfway into
// the record that holds the middle of its data.
uintmax_t MidRecord(const fs::path& wal) {
  const std::string bytes = Bytes(wal);
  const uint64_t middle = (bytes.find_last_not_of('\0') + 1) / 2;
  wal_format::RecordWalker walker(bytes);
  while (walker.Next() == wal_format::RecordWalker::Step::kRecord) {
    if (walker.pos() > middle) {
      return walker.record_pos() + (walker.pos() - walker.record_pos()) / 2;
    }
  }
  ADD_FAILURE() << "no record holds byte " << middle << " of " << wal;
  return middle;
}

std::string CutManifest(const fs::path& store, int percent) {
  const fs::path manifest = FilesWith(store, "MANIFEST-").back();
  fs::resize_file(manifest, fs::file_size(manifest) * percent / 100);
  return manifest.filename().string();
}

// A case that damages the store's one WAL with `damage(path)`: refused,
// and the repair keeps at least the trials in the SST.
Case WalCase(std::string name, std::function<void(const fs::path&)> damage,
             std::string kind) {
  return {std::move(name),
          [damage](const fs::path& store) {
            const std::string wal = OnlyWal(store);
            damage(store / wal);
            return wal;
          },
          {std::move(kind)},
          true,
          kFirst};
}

void GarbleStart(const fs::path& wal) {
  std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
  const std::string junk(100, '\x5a');
  f.write(junk.data(), junk.size());
}

std::vector<Case> Cases() {
  std::vector<Case> cases = {
      WalCase(
          "WalDeleted", [](const fs::path& wal) { fs::remove(wal); },
          "is missing"),
      WalCase(
          "WalEmptied", [](const fs::path& wal) { fs::resize_file(wal, 0); },
          "is empty"),
      WalCase("WalGarbledAtStart", GarbleStart, "is corrupt"),
      WalCase(
          "WalCutMidRecord",
          [](const fs::path& wal) { fs::resize_file(wal, MidRecord(wal)); },
          "is cut short"),
  };
  // What a cut MANIFEST lost depends on where the cut lands: RocksDB finds
  // it corrupt, or it no longer references an SST holding data, or it
  // references one a later edit deleted; any cut may also keep every edit
  // that matters.
  const std::vector<std::string> manifest_kinds = {
      "is corrupt", "is damaged or old", "is missing"};
  for (int percent : {10, 25, 50, 75, 90}) {
    cases.push_back({absl::StrCat("ManifestCutTo", percent, "Percent"),
                     [percent](const fs::path& store) {
                       return CutManifest(store, percent);
                     },
                     manifest_kinds, false, kFirst + kSecond});
  }
  cases.push_back({"OlderManifestPutBack",
                   [](const fs::path& store) {
                     const fs::path old = TheHistory().old_manifest;
                     fs::copy_file(old, store / old.filename());
                     std::ofstream(store / "CURRENT", std::ios::trunc)
                         << old.filename().string() << "\n";
                     return old.filename().string();
                   },
                   {"is damaged or old"},
                   true,
                   kFirst + kSecond});
  cases.push_back({"CurrentNamesAMissingManifest",
                   [](const fs::path& store) {
                     const fs::path manifest =
                         FilesWith(store, "MANIFEST-").back();
                     fs::remove(manifest);
                     return manifest.filename().string();
                   },
                   {"which CURRENT names, is missing"},
                   true,
                   kFirst + kSecond});
  cases.push_back({"SstDeleted",
                   [](const fs::path& store) {
                     const fs::path sst = FilesWith(store, ".sst").front();
                     fs::remove(sst);
                     return sst.filename().string();
                   },
                   {"is missing"},
                   true,
                   0});
  return cases;
}

class DamageMatrixTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    history = new History();
    history->error = "the history could not be made (see above)";
    MakeHistory(history);
  }

  static void TearDownTestSuite() {
    delete history;
    history = nullptr;
  }

  void SetUp() override {
    ASSERT_EQ(TheHistory().error, "");
    dir_ = tmp_.path() + "/data";
    fs::copy(TheHistory().dir, dir_, fs::copy_options::recursive);
    fs::remove(fs::path(dir_) / "cairnd.log");  // The history's.
    store_ = fs::path(dir_) / "store";
  }

  testing::CommandResult Cairnd(const std::string& flag) {
    return testing::RunCommand(
        {testing::BinDir() + "/cairnd", "--data-dir", dir_, flag});
  }

  // Starts cairnd on the damaged store: it serves every acknowledged trial,
  // or it refuses naming `file` and the case's kind. Returns whether it
  // refused.
  bool ExpectServedOrRefused(const std::string& file);

  // --verify agrees with the start, and neither changed the store (its
  // files were `damaged`); --repair salvages and keeps them aside; the
  // repaired store verifies clean and serves what the repair reported.
  void ExpectVerifyAndRepair(const std::string& file, bool refused,
                             const std::map<std::string, std::string>& damaged);

  // Whether `text` names one of the case's kinds of damage.
  bool NamesAKind(const std::string& text) const {
    for (const std::string& kind : GetParam().kinds) {
      if (text.find(kind) != std::string::npos) return true;
    }
    return false;
  }

  testing::TempDir tmp_;
  std::string dir_;
  fs::path store_;
};

bool DamageMatrixTest::ExpectServedOrRefused(const std::string& file) {
  testing::CairndProcess server(dir_);
  std::string error;
  if (server.Start(&error)) {
    EXPECT_EQ(Served(server, TheHistory().study), TheHistory().acknowledged)
        << "cairnd started and served a shorter history";
    server.Kill9();
    return false;
  }
  const std::string log = server.Log();
  std::cout << GetParam().name << ": " << log;
  EXPECT_THAT(log, HasSubstr("is damaged: "));
  EXPECT_THAT(log, HasSubstr(file));
  EXPECT_TRUE(NamesAKind(log)) << log;
  EXPECT_THAT(log, HasSubstr("cairnd --data-dir " + dir_ + " --repair"));
  return true;
}

// The number N in "recovered 1 studies, N trials" of a repair report.
int RepairedTrials(const std::string& report) {
  const std::string lead = "recovered ";
  const size_t at = report.find(lead);
  const size_t comma = report.find(", ", at);
  const size_t end = report.find(" trials", comma);
  int n = -1;
  if (at == std::string::npos || comma == std::string::npos ||
      end == std::string::npos ||
      !absl::SimpleAtoi(report.substr(comma + 2, end - comma - 2), &n)) {
    ADD_FAILURE() << "no trial count in: " << report;
  }
  return n;
}

void DamageMatrixTest::ExpectVerifyAndRepair(
    const std::string& file, bool refused,
    const std::map<std::string, std::string>& damaged) {
  testing::CommandResult verify = Cairnd("--verify");
  std::cout << verify.out;
  if (refused) {
    EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
    EXPECT_THAT(verify.out, HasSubstr("store is damaged"));
    EXPECT_THAT(verify.out, HasSubstr(file));
    EXPECT_TRUE(NamesAKind(verify.out)) << verify.out;
  } else {
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_THAT(verify.out, HasSubstr("store is intact"));
  }
  if (refused) {
    EXPECT_TRUE(Snapshot(store_) == damaged)
        << "the refused start or --verify changed the store";
  }
  testing::CommandResult repair = Cairnd("--repair");
  std::cout << repair.out;
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  const std::vector<fs::path> aside = FilesWith(dir_, "store.damaged-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_THAT(repair.out, HasSubstr(aside[0].string()));
  EXPECT_TRUE(Snapshot(aside[0]) == damaged) << "the aside copy differs";
  const int repaired = RepairedTrials(repair.out);
  EXPECT_GE(repaired, GetParam().min_repaired);
  verify = Cairnd("--verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is intact"));
  testing::CairndProcess server(dir_);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  const std::set<std::string> served = Served(server, TheHistory().study);
  EXPECT_EQ(served.size(), static_cast<size_t>(repaired));
  EXPECT_TRUE(std::includes(TheHistory().acknowledged.begin(),
                            TheHistory().acknowledged.end(), served.begin(),
                            served.end()))
      << "the repaired store serves a trial never acknowledged";
  server.Kill9();  // Only read: a clean stop would take seconds.
}

TEST_P(DamageMatrixTest, ServesEverythingOrRefusesNamingTheDamage) {
  const std::string file = GetParam().damage(store_);
  const std::map<std::string, std::string> damaged = Snapshot(store_);
  const bool refused = ExpectServedOrRefused(file);
  if (GetParam().must_refuse) {
    EXPECT_TRUE(refused) << "served every trial, which the table in "
                            "docs/operating.md does not say";
  }
  ExpectVerifyAndRepair(file, refused, damaged);
}

INSTANTIATE_TEST_SUITE_P(Damage, DamageMatrixTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace cairn
