// A damaged store never loses acknowledged data silently: a damaged store
// either opens with every acknowledged trial or refuses to open with an
// error naming the file and the damage, leaving every data file in place.
// Covered so far: a garbled newest WAL (it used to open with 600 of 1,000
// trials).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/damage_log.h"
#include "store/store.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kFirst = 600;   // Trials flushed into an SST by a reopen.
constexpr int kSecond = 400;  // Trials only in the newest WAL.

cairn::v1::Study MakeStudy() {
  cairn::v1::Study study;
  study.set_display_name("damage");
  auto* p = study.mutable_spec()->add_parameters();
  p->set_parameter_id("x");
  p->set_type(cairn::v1::ParameterSpec::DOUBLE);
  p->set_min_value(0);
  p->set_max_value(1);
  auto* m = study.mutable_spec()->add_metrics();
  m->set_metric_id("loss");
  m->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  return study;
}

void PutTrials(Store& store, int64_t study_id, int from, int to) {
  for (int id = from; id <= to; ++id) {
    cairn::v1::Trial t;
    t.set_id(id);
    t.set_state(cairn::v1::Trial::ACTIVE);
    t.set_client_id(std::string(200, 'c'));  // Some bulk per record.
    ASSERT_TRUE(store.PutTrials(study_id, {t}).ok());
  }
}

std::vector<fs::path> FilesEndingIn(const fs::path& dir,
                                    const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (absl::EndsWith(name, suffix) || absl::StartsWith(name, suffix)) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> DataFiles(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (absl::EndsWith(name, ".sst") || absl::EndsWith(name, ".log") ||
        absl::StartsWith(name, "MANIFEST-")) {
      out.insert(name);
    }
  }
  return out;
}

class DamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat(
               "cairn_damage_", getpid(), "_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    {
      auto store = Store::Open(StoreOptions(), dir_.string());
      ASSERT_TRUE(store.ok()) << store.status();
      auto id = (*store)->CreateStudy(MakeStudy());
      ASSERT_TRUE(id.ok()) << id.status();
      study_id_ = *id;
      PutTrials(**store, study_id_, 1, kFirst);
    }
    {
      // Reopening replays the WAL into an SST; the next trials go to a
      // new WAL only.
      auto store = Store::Open(StoreOptions(), dir_.string());
      ASSERT_TRUE(store.ok()) << store.status();
      PutTrials(**store, study_id_, kFirst + 1, kFirst + kSecond);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Opens the damaged store: either every trial is there, or the open fails
  // naming `file` and `kind`, and no data file was removed.
  void ExpectAllOrRefusal(const std::string& file, const std::string& kind) {
    const std::set<std::string> before = DataFiles(dir_);
    auto store = Store::Open(StoreOptions(), dir_.string());
    if (store.ok()) {
      auto all = (*store)->LoadAll();
      ASSERT_TRUE(all.ok()) << all.status();
      ASSERT_EQ(all->size(), 1u);
      EXPECT_EQ((*all)[0].trials.size(), size_t{kFirst + kSecond})
          << "opened without an error but lost acknowledged trials";
      return;
    }
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss)
        << store.status();
    EXPECT_THAT(store.status().message(), HasSubstr(file));
    EXPECT_THAT(store.status().message(), HasSubstr(kind));
    EXPECT_THAT(store.status().message(), HasSubstr("left in place"));
    EXPECT_LT(store.status().message().size(), 1024u);
    for (const std::string& name : before) {
      EXPECT_TRUE(fs::exists(dir_ / name)) << name << " was removed";
    }
  }

  fs::path NewestWal() {
    std::vector<fs::path> wals = FilesEndingIn(dir_, ".log");
    EXPECT_FALSE(wals.empty());
    return wals.empty() ? fs::path() : wals.back();
  }

  fs::path dir_;
  int64_t study_id_ = 0;
};

TEST_F(DamageTest, GarbledWalStart) {
  const fs::path wal = NewestWal();
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(100, '\x5a');
    f.write(junk.data(), junk.size());
  }
  ExpectAllOrRefusal(wal.filename().string(), "corrupt");
}

TEST(DamageLineTest, NamesTheFileAndTheDamage) {
  DamageReport r = ParseDamageLine(
      "/var/lib/cairn/store/000009.log: dropping 32768 bytes; Corruption: "
      "checksum mismatch");
  EXPECT_EQ(r.file, "000009.log");
  EXPECT_EQ(r.detail, "Corruption: checksum mismatch");
  r = ParseDamageLine("/d/MANIFEST-000005: Corruption: bad record length");
  EXPECT_EQ(r.file, "MANIFEST-000005");
  EXPECT_EQ(r.detail, "Corruption: bad record length");
  r = ParseDamageLine("DB::Open() failed: Corruption: checksum mismatch");
  EXPECT_EQ(r.file, "");
  EXPECT_EQ(r.detail, "Corruption: checksum mismatch");
  EXPECT_EQ(ParseDamageLine("Options.paranoid_checks: 1").detail, "");
}

}  // namespace
}  // namespace cairn
