// Disk full on a real (tiny) file system: a tmpfs mounted for the test,
// which needs root; without it the test skips and says why.
//  - the write that does not fit fails with ResourceExhausted naming the
//    store path, nothing aborts, later writes fail the same way;
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
#include "store/store.h"
#include "tests/testing/tmpfs.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

// RocksDB resumes once a memtable flush fits (64 MB free), so the file
// system must be larger than that.
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

TEST(DiskFullTest, WritesFailCleanlyReadsWorkAndResumeAfterSpaceIsFreed) {
  testing::ScopedTmpfs tmpfs(kTmpfsBytes);
  if (!tmpfs.status().ok()) GTEST_SKIP() << "skipped: " << tmpfs.status();
  const std::string dir = tmpfs.path() + "/store";
  auto opened = Store::Open(StoreOptions(), dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;
  cairn::v1::Study study;
  study.set_display_name("full");
  auto id = store.CreateStudy(study);
  ASSERT_TRUE(id.ok()) << id.status();
  tmpfs.Fill("filler", tmpfs.FreeBytes() - (1 << 20));

  std::set<int64_t> acked;
  absl::Status failed;
  int64_t next = 1;
  for (; next < 100000 && failed.ok(); ++next) {
    failed = store.PutTrials(*id, {BulkyTrial(next)});
    if (failed.ok()) acked.insert(next);
  }
  const int64_t failed_id = next - 1;
  ASSERT_EQ(failed.code(), absl::StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(std::string(failed.message()), HasSubstr(dir));
  EXPECT_GT(acked.size(), 10u);
  EXPECT_EQ(store.PutTrials(*id, {BulkyTrial(next)}).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(store.WriteHealth().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(store.Resume().ok());  // Still no space.
  EXPECT_EQ(TrialIds(store), acked);

  std::remove((tmpfs.path() + "/filler").c_str());
  // RocksDB polls for free space and recovers by itself; until it has,
  // Resume() says the store is still failing.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  absl::Status resumed = store.Resume();
  while (!resumed.ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    resumed = store.Resume();
  }
  ASSERT_TRUE(resumed.ok()) << resumed;
  fprintf(stderr, "writable again %.1f s after space was freed\n",
          absl::ToDoubleSeconds(absl::Now() - (deadline - absl::Seconds(30))));
  EXPECT_TRUE(store.WriteHealth().ok());
  for (int64_t k = 0; k < 3; ++k, ++next) {
    ASSERT_TRUE(store.PutTrials(*id, {BulkyTrial(next)}).ok());
    acked.insert(next);
  }
  opened->reset();

  auto reopened = Store::Open(StoreOptions(), dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  const std::set<int64_t> after = TrialIds(**reopened);
  EXPECT_EQ(after, acked);
  EXPECT_EQ(after.count(failed_id), 0u);
}

}  // namespace
}  // namespace cairn
