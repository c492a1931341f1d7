// The real cairnd on a damaged data dir: it refuses to start, --verify
// reports the damage (exit 1), --repair sets the store aside and salvages
// it (exit 0), and cairnd then starts and serves the recovered trials.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kFirst = 6;   // Trials flushed into an SST by the restart.
constexpr int kSecond = 4;  // Trials only in the newest WAL.

// Starts cairnd on `dir`, runs `fn` with it, stops it cleanly.
template <typename Fn>
void WithCairnd(const std::string& dir, Fn fn) {
  testing::CairndProcess server(dir);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  fn(server);
  EXPECT_EQ(server.Terminate(), 0) << server.Log(2000);
}

// Suggests `count` new trials (a new client each time, so none are re-served).
void Suggest(const testing::CairndProcess& server, const std::string& study,
             int count, const std::string& client) {
  cairn::v1::SuggestTrialsRequest req;
  req.set_parent(study);
  req.set_suggestion_count(count);
  req.set_client_id(client);
  cairn::v1::SuggestTrialsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server.NewStub()->SuggestTrials(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.trials_size(), count);
}

int CountTrials(const testing::CairndProcess& server,
                const std::string& study) {
  cairn::v1::ListTrialsRequest req;
  req.set_parent(study);
  cairn::v1::ListTrialsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server.NewStub()->ListTrials(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.trials_size();
}

testing::CommandResult Cairnd(const std::string& dir, const std::string& flag) {
  return testing::RunCommand(
      {testing::BinDir() + "/cairnd", "--data-dir", dir, flag});
}

// Creates a study with kFirst trials in a first cairnd run; returns its name.
std::string CreateStudyWithFirstTrials(const std::string& dir) {
  std::string study;
  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name("repair");
    *req.mutable_study()->mutable_spec() = testing::BraninSpec();
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server.NewStub()->CreateStudy(&ctx, req, &out).ok());
    study = out.name();
    Suggest(server, study, kFirst, "first");
  });
  return study;
}

TEST(StoreRepairTest, VerifyAndRepairADeletedNewestWal) {
  testing::TempDir tmp;
  const std::string dir = tmp.path();
  const std::string study = CreateStudyWithFirstTrials(dir);
  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    Suggest(server, study, kSecond, "second");
  });
  std::vector<fs::path> wals;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "store")) {
    if (e.path().extension() == ".log") wals.push_back(e.path());
  }
  ASSERT_FALSE(wals.empty());
  const fs::path wal = *std::max_element(wals.begin(), wals.end());
  fs::remove(wal);
  const std::string wal_name = wal.filename().string();

  testing::CommandResult start = Cairnd(dir, "--listen=127.0.0.1:0");
  EXPECT_EQ(start.exit_code, 1) << start.err;
  EXPECT_THAT(start.err, HasSubstr(wal_name + " is missing"));
  EXPECT_THAT(start.err, HasSubstr("cairnd --data-dir " + dir + " --repair"));

  testing::CommandResult verify = Cairnd(dir, "--verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is damaged"));
  EXPECT_THAT(verify.out, HasSubstr(wal_name + " is missing"));

  testing::CommandResult repair = Cairnd(dir, "--repair");
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_THAT(repair.out, HasSubstr("moved the damaged store aside to " + dir +
                                    "/store.damaged-"));
  EXPECT_THAT(repair.out, HasSubstr("recovered 1 studies, 6 trials"));

  verify = Cairnd(dir, "--verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is intact"));

  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    EXPECT_EQ(CountTrials(server, study), kFirst);
  });
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("store.damaged-", 0) == 0) {
      EXPECT_TRUE(fs::exists(e.path() / "CURRENT"));
      ++aside;
    }
  }
  EXPECT_EQ(aside, 1);
}

// The files of `store` whose names contain `part`, sorted.
std::vector<fs::path> StoreFiles(const fs::path& store,
                                 const std::string& part) {
  const std::vector<std::string> paths =
      testing::FilesContaining(store.string(), part);
  return {paths.begin(), paths.end()};
}

// The restart flushes the first trials into an SST, which RocksDB soon
// compacts to the bottom level, zeroing its sequence numbers; the next
// trials are only in the WAL when cairnd is killed. Cut in half, the
// MANIFEST no longer references that SST.
TEST(StoreRepairTest, VerifyAndRepairAManifestCutInHalf) {
  testing::TempDir tmp;
  const std::string dir = tmp.path();
  const fs::path store = fs::path(dir) / "store";
  const std::string study = CreateStudyWithFirstTrials(dir);
  {
    testing::CairndProcess server(dir);
    std::string error;
    ASSERT_TRUE(server.Start(&error)) << error;
    const std::vector<fs::path> flushed = StoreFiles(store, ".sst");
    ASSERT_EQ(flushed.size(), 1u);
    Suggest(server, study, kSecond, "second");
    EXPECT_EQ(CountTrials(server, study), kFirst + kSecond);
    for (int i = 0; i < 1000 && fs::exists(flushed[0]); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(fs::exists(flushed[0])) << "the SST was not compacted";
    server.Kill9();
  }
  const fs::path manifest = StoreFiles(store, "MANIFEST-").back();
  fs::resize_file(manifest, fs::file_size(manifest) / 2);

  {
    testing::CairndProcess refused(dir);
    std::string error;
    EXPECT_FALSE(refused.Start(&error)) << "cairnd served the damaged store";
    EXPECT_THAT(refused.Log(), HasSubstr("damaged or old"));
    EXPECT_THAT(refused.Log(),
                HasSubstr("cairnd --data-dir " + dir + " --repair"));
  }

  testing::CommandResult verify = Cairnd(dir, "--verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is damaged"));
  EXPECT_THAT(verify.out,
              HasSubstr(manifest.filename().string() + " is damaged or old"));

  testing::CommandResult repair = Cairnd(dir, "--repair");
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_THAT(repair.out, HasSubstr("recovered 1 studies, 10 trials"));

  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    EXPECT_EQ(CountTrials(server, study), kFirst + kSecond);
  });
}

}  // namespace
}  // namespace cairn
