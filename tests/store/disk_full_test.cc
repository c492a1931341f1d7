// Disk full on a real (tiny) file system: a tmpfs mounted for the test,
// which needs root; without it the test skips and says why.
//  - below kMinFreeBytesToWrite free, a write fails with ResourceExhausted
//    naming the store path, nothing aborts, later writes fail the same way;
//  - reads keep answering, with exactly the acknowledged writes;
//  - once space is freed, Resume() makes the store writable, no reopen;
//  - a reopened store holds every acknowledged write and no failed one.
#include <cstdio>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/rocksdb_store.h"
#include "store/store.h"
#include "store/verify.h"
#include "tests/testing/fault_file_system.h"
#include "tests/testing/test_util.h"
#include "tests/testing/tmpfs.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

// Larger than the store's write floor (kMinFreeBytesToWrite, 40 MB) plus
// a preallocated WAL (about 18 MB).
constexpr uint64_t kTmpfsBytes = 80 << 20;

cairn::v1::Trial BulkyTrial(int64_t id) {
  cairn::v1::Trial t;
  t.set_id(id);
  t.set_client_id(std::string(4000, 'x'));
  return t;
}

std::set<int64_t> TrialIds(Store& store) {
  std::set<int64_t> ids;
  auto all = store.LoadAll();
  EXPECT_TRUE(all.ok()) << all.status();
  if (!all.ok()) return ids;
  for (const StoredStudy& s : *all) {
    for (const auto& t : s.trials) ids.insert(t.id());
  }
  return ids;
}

// Calls Resume() every 100 ms until it succeeds or `limit` passed; returns
// its last status.
absl::Status ResumeWithin(Store& store, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  absl::Status resumed = store.Resume();
  while (!resumed.ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    resumed = store.Resume();
  }
  return resumed;
}

// Opens a store at `dir` and creates one study in it; *id is its id.
void OpenWithStudy(const StoreOptions& options, const std::string& dir,
                   std::unique_ptr<Store>* store, int64_t* id) {
  auto opened = Store::Open(options, dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  *store = std::move(*opened);
  cairn::v1::Study study;
  study.set_display_name("full");
  auto created = (*store)->CreateStudy(study);
  ASSERT_TRUE(created.ok()) << created.status();
  *id = *created;
}

TEST(DiskFullTest, WritesFailCleanlyReadsWorkAndResumeAfterSpaceIsFreed) {
  testing::ScopedTmpfs tmpfs(kTmpfsBytes);
  if (!tmpfs.status().ok()) GTEST_SKIP() << "skipped: " << tmpfs.status();
  const std::string dir = tmpfs.path() + "/store";
  std::unique_ptr<Store> opened;
  int64_t study_id = 0;
  OpenWithStudy(StoreOptions(), dir, &opened, &study_id);
  if (HasFatalFailure()) return;
  Store& store = *opened;
  // Just above the floor the store writes; just below it, it stops.
  tmpfs.Fill("filler", tmpfs.FreeBytes() - kMinFreeBytesToWrite - (1 << 20));
  std::set<int64_t> acked;
  int64_t next = 1;
  for (; next <= 20; ++next) {
    ASSERT_TRUE(store.PutTrials(study_id, {BulkyTrial(next)}).ok());
    acked.insert(next);
  }
  tmpfs.Fill("filler", 2 << 20);
  const int64_t failed_id = next++;
  const absl::Status failed =
      store.PutTrials(study_id, {BulkyTrial(failed_id)});
  ASSERT_EQ(failed.code(), absl::StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(std::string(failed.message()), HasSubstr(dir));
  EXPECT_THAT(std::string(failed.message()), HasSubstr("MB free"));
  EXPECT_EQ(store.PutTrials(study_id, {BulkyTrial(next)}).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(store.WriteHealth().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(store.Resume().ok());  // Still no space.
  EXPECT_EQ(TrialIds(store), acked);

  std::remove((tmpfs.path() + "/filler").c_str());
  // Resume() succeeds once there is room again.
  const absl::Time freed = absl::Now();
  const absl::Status resumed = ResumeWithin(store, absl::Seconds(30));
  ASSERT_TRUE(resumed.ok()) << resumed;
  fprintf(stderr, "writable again %.1f s after space was freed\n",
          absl::ToDoubleSeconds(absl::Now() - freed));
  EXPECT_TRUE(store.WriteHealth().ok());
  for (int64_t k = 0; k < 3; ++k, ++next) {
    ASSERT_TRUE(store.PutTrials(study_id, {BulkyTrial(next)}).ok());
    acked.insert(next);
  }
  opened.reset();

  auto reopened = Store::Open(StoreOptions(), dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  const std::set<int64_t> after = TrialIds(**reopened);
  EXPECT_EQ(after, acked);
  EXPECT_EQ(after.count(failed_id), 0u);
}

// RocksDB's own write fails (ENOSPC injected into its WAL appends by the
// fault file system, as when another process fills the disk between the
// store's free-space check and the write): ResourceExhausted naming the
// store, reads work, and once the disk works again Resume() brings writes
// back without reopening; a reopen finds every acknowledged write.
void FailWalThenResume(testing::FaultSpec::Error error,
                       absl::StatusCode expected_code) {
  testing::TempDir dir;
  std::shared_ptr<testing::FaultFileSystem> fs;
  StoreOptions options;
  options.wrap_file_system = testing::FaultFileSystem::Hook(&fs);
  std::unique_ptr<Store> opened;
  int64_t study_id = 0;
  OpenWithStudy(options, dir.path(), &opened, &study_id);
  if (::testing::Test::HasFatalFailure()) return;
  Store& store = *opened;
  std::set<int64_t> acked;
  for (int64_t t = 1; t <= 5; ++t) {
    ASSERT_TRUE(store.PutTrials(study_id, {BulkyTrial(t)}).ok());
    acked.insert(t);
  }
  testing::FaultSpec spec;
  spec.error = error;
  spec.kinds = testing::kWalFile;
  fs->InjectFaults(spec);
  const absl::Status failed = store.PutTrials(study_id, {BulkyTrial(6)});
  ASSERT_EQ(failed.code(), expected_code) << failed;
  EXPECT_THAT(std::string(failed.message()), HasSubstr(dir.path()));
  EXPECT_EQ(store.PutTrials(study_id, {BulkyTrial(7)}).code(), expected_code);
  EXPECT_EQ(TrialIds(store), acked);

  fs->ClearFaults();
  const absl::Status resumed = ResumeWithin(store, absl::Seconds(30));
  ASSERT_TRUE(resumed.ok()) << resumed;
  for (int64_t t = 8; t <= 10; ++t) {
    ASSERT_TRUE(store.PutTrials(study_id, {BulkyTrial(t)}).ok());
    acked.insert(t);
  }
  opened.reset();
  // The store that resumed (with its meta/last_resume record) verifies
  // clean.
  absl::StatusOr<VerifyReport> report = VerifyStore(dir.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->problems.empty())
      << FormatVerifyReport(dir.path(), *report);
  auto reopened = Store::Open(StoreOptions(), dir.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  const std::set<int64_t> after = TrialIds(**reopened);
  for (int64_t t : acked) EXPECT_EQ(after.count(t), 1u) << t;
  EXPECT_EQ(after.count(7), 0u);
}

TEST(DiskFullTest, RocksDbNoSpaceOnTheWalResumesWithoutReopen) {
  FailWalThenResume(testing::FaultSpec::Error::kNoSpace,
                    absl::StatusCode::kResourceExhausted);
}

// EIO on the WAL: Unavailable naming the store, reads work, and since
// RocksDB 7.8 cannot resume from it in place, Resume() keeps failing and
// says to restart; the restart (a reopen) finds every acknowledged write.
TEST(DiskFullTest, RocksDbIoErrorOnTheWalNeedsARestartAndLosesNothing) {
  testing::TempDir dir;
  std::shared_ptr<testing::FaultFileSystem> fs;
  StoreOptions options;
  options.wrap_file_system = testing::FaultFileSystem::Hook(&fs);
  std::unique_ptr<Store> opened;
  int64_t study_id = 0;
  OpenWithStudy(options, dir.path(), &opened, &study_id);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(opened->PutTrials(study_id, {BulkyTrial(1)}).ok());
  testing::FaultSpec spec;
  spec.error = testing::FaultSpec::Error::kIoError;
  spec.kinds = testing::kWalFile;
  fs->InjectFaults(spec);
  const absl::Status failed = opened->PutTrials(study_id, {BulkyTrial(2)});
  ASSERT_EQ(failed.code(), absl::StatusCode::kUnavailable) << failed;
  EXPECT_THAT(std::string(failed.message()), HasSubstr(dir.path()));
  EXPECT_EQ(TrialIds(*opened), std::set<int64_t>{1});
  fs->ClearFaults();
  const absl::Status resumed = opened->Resume();
  EXPECT_EQ(resumed.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(resumed.message()), HasSubstr("restart cairnd"));
  EXPECT_EQ(opened->PutTrials(study_id, {BulkyTrial(3)}).code(),
            absl::StatusCode::kUnavailable);
  opened.reset();
  auto reopened = Store::Open(StoreOptions(), dir.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(TrialIds(**reopened).count(1), 1u);
  EXPECT_EQ(TrialIds(**reopened).count(3), 0u);
  EXPECT_TRUE((*reopened)->PutTrials(study_id, {BulkyTrial(4)}).ok());
}

}  // namespace
}  // namespace cairn
