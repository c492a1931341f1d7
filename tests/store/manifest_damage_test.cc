// A MANIFEST cut short anywhere, or replaced by an older copy, in a store
// with this history: 600 trials written and the store closed, then reopened
// (which flushes them into an SST), 400 more trials only in the WAL, a
// compaction to the bottom level that zeroes the SST's sequence numbers
// (RocksDB runs one once a read snapshot is released after new writes), and
// a kill -9. Each damaged store must be refused naming the MANIFEST,
// reported by verify, and repaired with all 1,000 trials. The history alone
// (no damage) must verify clean and serve all 1,000.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/damage_check.h"
#include "store/db_options.h"
#include "store/store.h"
#include "store/verify.h"
#include "tests/store/damage_fixture.h"
#include "tests/testing/run_all_tests.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using damage_testing::FilesEndingIn;
using damage_testing::TrialsServed;
using ::testing::HasSubstr;

constexpr int kFirst = 600;    // Trials flushed into an SST by a reopen.
constexpr int kTrials = 1000;  // All trials; those after kFirst in the WAL.

// Where the history keeps the SST the compaction replaced (the store's
// directory is `store`).
fs::path CompactionInput(const fs::path& store) {
  return store.parent_path() / "compaction-input";
}

// Child process: reopens the store at `path` (which flushes the WAL into
// the store's one SST, linked into CompactionInput), writes trials
// kFirst+1..kTrials, releases a read snapshot so that RocksDB compacts that
// SST to the bottom level, waits for that, then kills itself with SIGKILL.
// Returns (exits) only on failure.
int KillChildMain(const std::string& path) {
  StoreOptions fast;
  fast.sync = false;  // Written all the same: a kill -9 keeps the OS's cache.
  auto store = Store::Open(fast, path);
  if (!store.ok()) return 2;
  const std::vector<fs::path> ssts = FilesEndingIn(path, ".sst");
  auto all = (*store)->LoadAll();
  if (ssts.size() != 1 || !all.ok() || all->size() != 1) return 3;
  std::error_code ec;
  fs::create_hard_link(ssts[0], CompactionInput(path) / ssts[0].filename(), ec);
  if (ec) return 8;
  for (int id = kFirst + 1; id <= kTrials; ++id) {
    cairn::v1::Trial t;
    t.set_id(id);
    t.set_state(cairn::v1::Trial::ACTIVE);
    t.set_client_id(std::string(200, 'c'));
    if (!(*store)->PutTrials((*all)[0].study_id, {t}).ok()) return 4;
  }
  if (!(*store)->LoadAll().ok()) return 5;
  for (int i = 0; i < 1000 && fs::exists(ssts[0]); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (fs::exists(ssts[0])) return 6;
  raise(SIGKILL);
  return 7;
}

// Child process: writes trials to the store at `path` until killed, and
// releases a read snapshot after every 20 so that RocksDB keeps compacting
// its oldest SSTs to the bottom level (zeroing their sequence numbers).
int CompactingWriterMain(const std::string& path) {
  StoreOptions fast;
  fast.sync = false;
  auto store = Store::Open(fast, path);
  if (!store.ok()) return 2;
  auto all = (*store)->LoadAll();
  if (!all.ok() || all->size() != 1) return 3;
  for (int64_t id = (*all)[0].max_trial_id + 1;; ++id) {
    cairn::v1::Trial t;
    t.set_id(id);
    t.set_client_id(std::string(30000, 'w'));  // Flushes often.
    if (!(*store)->PutTrials((*all)[0].study_id, {t}).ok()) return 4;
    if (id % 20 == 0 && !(*store)->LoadAll().ok()) return 5;
  }
}

// The history above, built once into a directory the tests copy; a copy of
// the MANIFEST as it was before the reopen, and the SST the compaction
// replaced.
struct History {
  fs::path dir;
  fs::path old_manifest;
  fs::path compaction_input;
};

void BuildHistory(History* h) {
  const fs::path root = fs::temp_directory_path() /
                        absl::StrCat("cairn_manifest_history_", getpid());
  fs::remove_all(root);
  h->dir = root / "store";
  fs::create_directories(root / "before-reopen");
  fs::create_directories(CompactionInput(h->dir));
  StoreOptions fast;
  fast.sync = false;
  {
    auto store = Store::Open(fast, h->dir.string());
    ASSERT_TRUE(store.ok()) << store.status();
    auto id = (*store)->CreateStudy(damage_testing::MakeStudy());
    ASSERT_TRUE(id.ok()) << id.status();
    damage_testing::PutTrials(**store, *id, 1, kFirst);
  }
  const fs::path manifest = FilesEndingIn(h->dir, "MANIFEST-").back();
  h->old_manifest = root / "before-reopen" / manifest.filename();
  fs::copy_file(manifest, h->old_manifest);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const char* self = "/proc/self/exe";
    execl(self, self, "--kill_child", h->dir.c_str(), nullptr);
    _exit(127);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << wstatus;
  const std::vector<fs::path> input =
      FilesEndingIn(CompactionInput(h->dir), ".sst");
  ASSERT_EQ(input.size(), 1u);
  h->compaction_input = input[0];
}

const History& TheHistory() {
  static const History* history = [] {
    auto* h = new History();
    BuildHistory(h);
    return h;
  }();
  return *history;
}

class ManifestDamageTest : public damage_testing::DamagedStoreTest {
 protected:
  void SetUp() override {
    DamagedStoreTest::SetUp();
    ASSERT_FALSE(TheHistory().dir.empty());
    fs::copy(TheHistory().dir, dir_);
  }

  fs::path Manifest() { return FilesEndingIn(dir_, "MANIFEST-").back(); }

  // The store verifies clean and serves every trial.
  void ExpectIntact() {
    absl::StatusOr<VerifyReport> verify = VerifyStore(dir_.string());
    ASSERT_TRUE(verify.ok()) << verify.status();
    EXPECT_TRUE(verify->problems.empty())
        << FormatVerifyReport(dir_.string(), *verify);
    EXPECT_EQ(TrialsServed(dir_), size_t{kTrials});
  }

  void ExpectRefusedAndRepairedWhole() {
    ExpectRefusal("MANIFEST", "is damaged");
    ExpectVerifyAndRepair(kTrials);
    EXPECT_EQ(TrialsServed(dir_), size_t{kTrials});
  }
};

TEST_F(ManifestDamageTest, HistoryAloneIsIntact) {
  // The history has what the damage tests need: one SST, its sequence
  // numbers zeroed by the compaction, and the later trials in the WAL.
  const std::vector<fs::path> ssts = FilesEndingIn(dir_, ".sst");
  ASSERT_EQ(ssts.size(), 1u);
  absl::StatusOr<std::optional<SeqnoRange>> range =
      ReadSstSeqnoRange(ssts[0].string());
  ASSERT_TRUE(range.ok() && range->has_value()) << range.status();
  EXPECT_EQ((*range)->smallest, 0u);
  EXPECT_EQ((*range)->largest, 0u);
  ExpectIntact();
}

// A kill -9 after the compaction's edit and before RocksDB deletes its
// input leaves the input behind; a compaction to the bottom level zeroed
// the sequence numbers of the SST that now holds its writes.
TEST_F(ManifestDamageTest, InputOfAFinishedCompactionLeftBehindIsNoAlarm) {
  const fs::path input = TheHistory().compaction_input;
  ASSERT_FALSE(fs::exists(dir_ / input.filename()));
  fs::copy_file(input, dir_ / input.filename());
  ExpectIntact();
}

TEST_F(ManifestDamageTest, OlderManifestPutBack) {
  const fs::path old = TheHistory().old_manifest;
  fs::copy_file(old, dir_ / old.filename());
  std::ofstream(dir_ / "CURRENT", std::ios::trunc)
      << old.filename().string() << "\n";
  ExpectRefusedAndRepairedWhole();
}

// With the SST it lost gone too, the WAL still shows writes the MANIFEST
// no longer accounts for.
TEST_F(ManifestDamageTest, CutManifestWithItsLostSstGone) {
  const fs::path manifest = Manifest();
  fs::resize_file(manifest, fs::file_size(manifest) / 2);
  for (const fs::path& sst : FilesEndingIn(dir_, ".sst")) fs::remove(sst);
  ExpectRefusal(manifest.filename().string(), "are in neither");
  absl::StatusOr<VerifyReport> verify = VerifyStore(dir_.string());
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_THAT(FormatVerifyReport(dir_.string(), *verify),
              HasSubstr("; writes 1.."));
}

// kill -9 at random points while flushes and compactions to the bottom
// level run: what they leave behind is never taken for a damaged MANIFEST.
TEST_F(ManifestDamageTest, KillNineWhileCompactingIsNeverAFalseAlarm) {
  size_t trials_before = kTrials;
  KillNineRounds("--compacting_writer", 5, 1200, [&](int round) {
    absl::StatusOr<std::vector<std::string>> damage =
        FindStoreDamage(dir_.string());
    ASSERT_TRUE(damage.ok()) << damage.status();
    ASSERT_TRUE(damage->empty()) << "round " << round << ": " << (*damage)[0];
    const size_t trials = TrialsServed(dir_);
    ASSERT_GE(trials, trials_before) << "round " << round;
    trials_before = trials;
  });
}

class ManifestCutTest : public ManifestDamageTest,
                        public ::testing::WithParamInterface<int> {};

TEST_P(ManifestCutTest, CutShort) {
  const fs::path manifest = Manifest();
  fs::resize_file(manifest, fs::file_size(manifest) * GetParam() / 100);
  ExpectRefusedAndRepairedWhole();
}

INSTANTIATE_TEST_SUITE_P(PercentKept, ManifestCutTest,
                         ::testing::Values(10, 25, 50, 75, 90),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat(info.param, "Percent");
                         });

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--compacting_writer") {
    return cairn::CompactingWriterMain(argv[2]);
  }
  if (argc == 3 && std::string(argv[1]) == "--kill_child") {
    return cairn::KillChildMain(argv[2]);
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int result = cairn::testing::RunAllTests();
  std::error_code ec;
  std::filesystem::remove_all(
      std::filesystem::temp_directory_path() /
          absl::StrCat("cairn_manifest_history_", getpid()),
      ec);
  return result;
}
