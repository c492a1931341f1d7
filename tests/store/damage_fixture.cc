// See damage_fixture.h.
#include "tests/store/damage_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "store/verify.h"

namespace cairn::damage_testing {

using ::testing::HasSubstr;

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

std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    out[e.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

size_t TrialsServed(const fs::path& path) {
  auto store = Store::Open(StoreOptions(), path.string());
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return 0;
  auto all = (*store)->LoadAll();
  EXPECT_TRUE(all.ok()) << all.status();
  size_t trials = 0;
  for (const StoredStudy& s : all.ok() ? *all : std::vector<StoredStudy>()) {
    trials += s.trials.size();
  }
  return trials;
}

void DamagedStoreTest::SetUp() {
  // A parameterized test's name holds a '/'.
  std::string name =
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  dir_ = fs::temp_directory_path() /
         absl::StrCat("cairn_damage_", getpid(), "_", name);
  fs::remove_all(dir_);
}

void DamagedStoreTest::TearDown() {
  fs::remove_all(dir_);
  if (!aside_.empty()) fs::remove_all(aside_);
}

void DamagedStoreTest::ExpectRefusal(const std::string& file,
                                     const std::string& kind) {
  const std::set<std::string> before = DataFiles(dir_);
  const std::map<std::string, std::string> bytes_before = Snapshot(dir_);
  auto store = Store::Open(StoreOptions(), dir_.string());
  ASSERT_FALSE(store.ok()) << "opened the damaged store";
  std::cout << "refused: " << store.status().message() << "\n";
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(file));
  EXPECT_THAT(store.status().message(), HasSubstr(kind));
  EXPECT_THAT(store.status().message(), HasSubstr("left in place"));
  EXPECT_THAT(
      store.status().message(),
      HasSubstr(absl::StrCat("cairnd --data-dir ", dir_.parent_path().string(),
                             " --repair")));
  EXPECT_TRUE(Snapshot(dir_) == bytes_before)
      << "the refused open changed the directory";
  EXPECT_LT(store.status().message().size(), 1024u);
  for (const std::string& name : before) {
    EXPECT_TRUE(fs::exists(dir_ / name)) << name << " was removed";
  }
}

RepairReport DamagedStoreTest::ExpectVerifyAndRepair(size_t min_trials) {
  absl::StatusOr<VerifyReport> verify = VerifyStore(dir_.string());
  EXPECT_TRUE(verify.ok()) << verify.status();
  EXPECT_FALSE(verify.ok() && verify->problems.empty())
      << "verify found no damage";
  const std::map<std::string, std::string> damaged = Snapshot(dir_);
  absl::StatusOr<RepairReport> repair = RepairStore(dir_.string(), Now());
  EXPECT_TRUE(repair.ok()) << repair.status();
  if (!repair.ok()) return RepairReport();
  std::cout << FormatRepairReport(dir_.string(), *repair);
  EXPECT_FALSE(repair->damage.empty());
  ExpectSetAside(repair->aside_path, damaged);
  EXPECT_GE(repair->recovered.trials, static_cast<int64_t>(min_trials));
  EXPECT_GE(TrialsServed(dir_), min_trials);
  return *repair;
}

void DamagedStoreTest::ExpectSetAside(
    const std::string& aside, std::map<std::string, std::string> before) {
  EXPECT_THAT(aside, HasSubstr(".damaged-20261123-"));
  std::map<std::string, std::string> after = Snapshot(aside);
  before.erase("LOCK");  // Empty either way; RocksDB may recreate it.
  after.erase("LOCK");
  EXPECT_TRUE(after == before) << "the aside copy differs";
  aside_ = aside;
}

void DamagedStoreTest::KillNineRounds(
    const std::string& child_flag, int rounds, int max_delay_ms,
    const std::function<void(int round)>& check) {
  std::mt19937 rng(::testing::UnitTest::GetInstance()->random_seed());
  std::uniform_int_distribution<int> delay_ms(0, max_delay_ms);
  for (int round = 0; round < rounds && !HasFatalFailure(); ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const char* self = "/proc/self/exe";
      execl(self, self, child_flag.c_str(), dir_.c_str(), nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited early: " << wstatus;
    check(round);
  }
}

absl::Time DamagedStoreTest::Now() {
  return absl::FromCivil(absl::CivilSecond(2026, 11, 23, 12, 0, 0),
                         absl::UTCTimeZone());
}

fs::path DamagedStoreTest::NewestWal() {
  std::vector<fs::path> wals = FilesEndingIn(dir_, ".log");
  EXPECT_FALSE(wals.empty());
  return wals.empty() ? fs::path() : wals.back();
}

}  // namespace cairn::damage_testing
