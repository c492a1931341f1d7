// A damaged store never loses acknowledged data silently: a damaged store
// either opens with every acknowledged trial or refuses to open with an
// error naming the file and the damage, leaving every data file in place.
// Covered: a garbled, emptied or deleted newest WAL and a MANIFEST cut in
// half (each of which RocksDB's own recovery opens with only part of the
// trials), and kill -9s under writes, which must never look like damage.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/file_system.h"
#include "store/damage_check.h"
#include "store/damage_log.h"
#include "store/db_options.h"
#include "store/repair.h"
#include "store/store.h"
#include "store/verify.h"
#include "tests/store/damage_fixture.h"
#include "tests/testing/run_all_tests.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using damage_testing::DataFiles;
using damage_testing::FilesEndingIn;
using damage_testing::MakeStudy;
using damage_testing::PutTrials;
using damage_testing::Snapshot;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kFirst = 600;   // Trials flushed into an SST by a reopen.
constexpr int kSecond = 400;  // Trials only in the newest WAL.

class DamageTest : public damage_testing::DamagedStoreTest {
 protected:
  void SetUp() override {
    DamagedStoreTest::SetUp();
    // Unsynced writes keep the fixture fast; closing the store syncs the
    // WAL (and records the durable mark) all the same.
    StoreOptions fast;
    fast.sync = false;
    {
      auto store = Store::Open(fast, dir_.string());
      ASSERT_TRUE(store.ok()) << store.status();
      auto id = (*store)->CreateStudy(MakeStudy());
      ASSERT_TRUE(id.ok()) << id.status();
      study_id_ = *id;
      PutTrials(**store, study_id_, 1, kFirst);
    }
    {
      // Reopening replays the WAL into an SST; the next trials go to a
      // new WAL only.
      auto store = Store::Open(fast, dir_.string());
      ASSERT_TRUE(store.ok()) << store.status();
      PutTrials(**store, study_id_, kFirst + 1, kFirst + kSecond);
    }
  }
};

TEST_F(DamageTest, GarbledWalStart) {
  const fs::path wal = NewestWal();
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(100, '\x5a');
    f.write(junk.data(), junk.size());
  }
  ExpectRefusal(wal.filename().string(), "corrupt");
  ExpectVerifyAndRepair(kFirst);
}

TEST_F(DamageTest, EmptiedNewestWal) {
  const fs::path wal = NewestWal();
  fs::resize_file(wal, 0);
  ExpectRefusal(wal.filename().string(), "is empty");
  ExpectVerifyAndRepair(kFirst);
}

TEST_F(DamageTest, DeletedNewestWal) {
  const fs::path wal = NewestWal();
  fs::remove(wal);
  ExpectRefusal(wal.filename().string(), "is missing");
  ExpectVerifyAndRepair(kFirst);
}

// The WAL of a store closed cleanly, cut in the middle of its data: the
// mark written at the close names its last write.
TEST_F(DamageTest, CutWalOfAClosedStore) {
  const fs::path wal = NewestWal();
  fs::resize_file(wal, fs::file_size(wal) / 2);
  ExpectRefusal(wal.filename().string(), "ends early");
  ExpectVerifyAndRepair(kFirst);
}

TEST_F(DamageTest, ManifestCutInHalf) {
  const fs::path manifest = FilesEndingIn(dir_, "MANIFEST-").back();
  fs::resize_file(manifest, fs::file_size(manifest) / 2);
  ExpectRefusal(".sst", "does not reference");
  ExpectVerifyAndRepair(kFirst + kSecond);
}

TEST_F(DamageTest, DeletedSst) {
  const fs::path sst = FilesEndingIn(dir_, ".sst").front();
  fs::remove(sst);
  ExpectRefusal(sst.filename().string(), "is missing");
  // The SST held the study record: its 400 newer trials (and its max trial
  // id) cannot be served without it, and the repair says so.
  const RepairReport repair = ExpectVerifyAndRepair(0);
  EXPECT_EQ(repair.recovered.studies, 0);
  EXPECT_EQ(repair.orphaned, kSecond + 1);
}

// The mark is replaced atomically, so a garbled one is damage too; repair
// loses nothing then.
TEST_F(DamageTest, GarbledDurableMark) {
  {
    std::ofstream out(dir_ / "CAIRN-DURABLE", std::ios::trunc);
    out << "\x5a\x5a garbage";
  }
  ExpectRefusal("CAIRN-DURABLE", "is corrupt");
  ExpectVerifyAndRepair(kFirst + kSecond);
}

// The leftovers of a flush or compaction cut short by a crash: SSTs the
// MANIFEST does not reference whose data the store still holds. Made here by
// flushing a copy of the store (the flush output holds the newest WAL's
// writes) and copying a referenced SST (as a compaction output would hold).
TEST_F(DamageTest, LeftoversOfAnInterruptedFlushOrCompactionAreNoAlarm) {
  const fs::path copy = dir_.string() + ".copy";
  fs::remove_all(copy);
  fs::copy(dir_, copy);
  const std::set<std::string> ssts_before = DataFiles(copy);
  {
    std::unique_ptr<rocksdb::Env> env(
        rocksdb::NewCompositeEnv(rocksdb::FileSystem::Default()));
    rocksdb::Options options = StoreDbOptions(env.get());
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, copy.string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  }
  int copied = 0;
  for (const std::string& name : DataFiles(copy)) {
    if (absl::EndsWith(name, ".sst") && !ssts_before.count(name)) {
      fs::copy_file(copy / name, dir_ / "900001.sst");  // Flush output.
      ++copied;
    }
  }
  fs::remove_all(copy);
  ASSERT_EQ(copied, 1);
  const fs::path live_sst = FilesEndingIn(dir_, ".sst").front();
  fs::copy_file(live_sst, dir_ / "900002.sst");  // Compaction output.
  auto store = Store::Open(StoreOptions(), dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ((*all)[0].trials.size(), size_t{kFirst + kSecond});
}

// The output of a compaction to the bottom level, whose sequence numbers
// RocksDB zeroes, left unreferenced by a crash while its input SST is still
// referenced: no alarm. Made by compacting the referenced SST of a copy of
// the store to the bottom level (its WAL replayed into the memtable only).
TEST_F(DamageTest, ZeroedLeftoverOfAnInterruptedCompactionIsNoAlarm) {
  const fs::path copy = dir_.string() + ".copy";
  fs::remove_all(copy);
  fs::copy(dir_, copy);
  {
    std::unique_ptr<rocksdb::Env> env(
        rocksdb::NewCompositeEnv(rocksdb::FileSystem::Default()));
    rocksdb::Options options = StoreDbOptions(env.get());
    options.avoid_flush_during_recovery = true;
    options.disable_auto_compactions = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, copy.string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::vector<std::string> out;
    ASSERT_TRUE(db->CompactFiles(rocksdb::CompactionOptions(),
                                 {FilesEndingIn(copy, ".sst").front().string()},
                                 options.num_levels - 1, -1, &out)
                    .ok());
    ASSERT_EQ(out.size(), 1u);
    fs::copy_file(out[0], dir_ / "900003.sst");
  }
  fs::remove_all(copy);
  absl::StatusOr<std::optional<SeqnoRange>> range =
      ReadSstSeqnoRange((dir_ / "900003.sst").string());
  ASSERT_TRUE(range.ok() && range->has_value()) << range.status();
  ASSERT_EQ((*range)->smallest, 0u);
  EXPECT_EQ(damage_testing::TrialsServed(dir_), size_t{kFirst + kSecond});
}

// A MANIFEST that tracks a WAL (RocksDB records a closed WAL once it is
// synced, until its memtable is flushed): made by switching to a new WAL
// with background flushes paused and then syncing a write.
TEST_F(DamageTest, ManifestTrackingAWalIsNoAlarm) {
  {
    std::unique_ptr<rocksdb::Env> env(
        rocksdb::NewCompositeEnv(rocksdb::FileSystem::Default()));
    rocksdb::Options options = StoreDbOptions(env.get());
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_.string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteOptions sync;
    sync.sync = true;
    ASSERT_TRUE(db->PauseBackgroundWork().ok());
    ASSERT_TRUE(db->Put(sync, "zz/before-switch", "1").ok());
    rocksdb::FlushOptions no_wait;
    no_wait.wait = false;
    ASSERT_TRUE(db->Flush(no_wait).ok());
    ASSERT_TRUE(db->Put(sync, "zz/after-switch", "2").ok());
  }
  absl::StatusOr<std::vector<std::string>> damage =
      FindStoreDamage(dir_.string());
  ASSERT_TRUE(damage.ok()) << damage.status();
  EXPECT_TRUE(damage->empty()) << (*damage)[0];
  EXPECT_EQ(damage_testing::TrialsServed(dir_), size_t{kFirst + kSecond});
}

// Writes acknowledged just before a kill -9 are newer than the recorder's
// last mark; their WAL deleted, emptied or cut short is refused all the
// same, because the first write to each WAL records the mark
// (store/wal_first_write.h). The kill -9 is a copy of the directory taken
// while the store is open (the page cache survives a kill -9).
TEST_F(DamageTest, WalLostRightAfterItsWritesIsRefused) {
  const fs::path killed = dir_.string() + ".killed";
  fs::remove_all(killed);
  {
    auto store = Store::Open(StoreOptions(), dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    PutTrials(**store, study_id_, kFirst + kSecond + 1, kFirst + kSecond + 5);
    fs::copy(dir_, killed);
  }
  const std::vector<fs::path> wals = FilesEndingIn(killed, ".log");
  ASSERT_EQ(wals.size(), 1u);
  const std::string wal = wals[0].filename().string();
  std::ifstream in(wals[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const size_t end = bytes.find_last_not_of('\0') + 1;
  ASSERT_LT(end, bytes.size()) << "the WAL was not preallocated";
  const std::vector<std::pair<uint64_t, std::string>> cases = {
      {bytes.size() + 1, "is missing"},  // Deleted.
      {0, "is empty"},
      {end - 10, "is cut short"},
  };
  for (const auto& [size, kind] : cases) {
    fs::remove_all(dir_);
    fs::copy(killed, dir_);
    if (size > bytes.size()) {
      fs::remove(dir_ / wal);
    } else {
      fs::resize_file(dir_ / wal, size);
    }
    ExpectRefusal(wal, kind);
  }
  fs::remove_all(killed);
}

TEST_F(DamageTest, IntactStoreVerifiesCleanAndRepairsLosslessly) {
  {
    auto store = Store::Open(StoreOptions(), dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    std::vector<Store::MeasurementWrite> writes;
    for (int step = 1; step <= 3; ++step) {
      cairn::v1::Measurement m;
      m.set_step_count(step);
      writes.push_back({study_id_, 7, m});
    }
    ASSERT_TRUE((*store)->AppendMeasurements(writes).ok());
  }
  absl::StatusOr<VerifyReport> verify = VerifyStore(dir_.string());
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_TRUE(verify->problems.empty())
      << FormatVerifyReport(dir_.string(), *verify);
  EXPECT_EQ(verify->records.studies, 1);
  EXPECT_EQ(verify->records.trials, kFirst + kSecond);
  EXPECT_EQ(verify->records.measurements, 3);
  EXPECT_THAT(FormatVerifyReport(dir_.string(), *verify),
              HasSubstr("store is intact"));
  std::vector<cairn::v1::Trial> trials_before;
  {
    auto store = Store::Open(StoreOptions(), dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    trials_before = (*(*store)->LoadAll())[0].trials;
  }
  const std::map<std::string, std::string> before = Snapshot(dir_);
  absl::StatusOr<RepairReport> repair = RepairStore(dir_.string(), Now());
  ASSERT_TRUE(repair.ok()) << repair.status();
  EXPECT_TRUE(repair->damage.empty());
  EXPECT_EQ(repair->recovered.trials, kFirst + kSecond);
  EXPECT_EQ(repair->recovered.measurements, 3);
  EXPECT_EQ(repair->unreadable + repair->orphaned, 0);
  ExpectSetAside(repair->aside_path, before);
  const std::string printed = FormatRepairReport(dir_.string(), *repair);
  EXPECT_THAT(printed, HasSubstr("no damage found"));
  EXPECT_THAT(printed, HasSubstr("moved the original store aside"));
  EXPECT_THAT(printed, HasSubstr("nothing lost"));
  EXPECT_THAT(printed, Not(HasSubstr("damaged store")));
  auto store = Store::Open(StoreOptions(), dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  ASSERT_EQ((*all)[0].trials.size(), trials_before.size());
  for (size_t i = 0; i < trials_before.size(); ++i) {
    EXPECT_EQ((*all)[0].trials[i].SerializeAsString(),
              trials_before[i].SerializeAsString());
  }
  auto measurements = (*store)->ListMeasurements(study_id_, 7);
  ASSERT_TRUE(measurements.ok()) << measurements.status();
  ASSERT_EQ(measurements->size(), 3u);
  EXPECT_EQ((*measurements)[2].step_count(), 3);
  // The name index was rebuilt: the display name is still taken.
  EXPECT_EQ((*store)->CreateStudy(MakeStudy()).status().code(),
            absl::StatusCode::kAlreadyExists);
}

// Writes trials to the store at `path` until killed (child process).
int WriteChildMain(const std::string& path) {
  auto store = Store::Open(StoreOptions(), path);
  if (!store.ok()) {
    fprintf(stderr, "write child: %s\n", store.status().ToString().c_str());
    return 2;
  }
  auto all = (*store)->LoadAll();
  if (!all.ok() || all->size() != 1) return 3;
  int64_t next = (*all)[0].max_trial_id + 1;
  for (;; ++next) {
    cairn::v1::Trial t;
    t.set_id(next);
    t.set_client_id(std::string(30000, 'w'));  // Flushes often.
    if (!(*store)->PutTrials((*all)[0].study_id, {t}).ok()) return 4;
  }
}

// kill -9 at random points under writes (in a WAL append, a flush, a mark
// update, an open): every reopen must succeed with no trial lost.
TEST_F(DamageTest, CleanKillNineIsNeverAFalseAlarm) {
  size_t trials_before = kFirst + kSecond;
  KillNineRounds("--write_child", 5, 1200, [&](int round) {
    auto store = Store::Open(StoreOptions(), dir_.string());
    ASSERT_TRUE(store.ok()) << "round " << round << ": " << store.status();
    auto all = (*store)->LoadAll();
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_GE((*all)[0].trials.size(), trials_before) << "round " << round;
    trials_before = (*all)[0].trials.size();
  });
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

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write_child") {
    return cairn::WriteChildMain(argv[2]);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return cairn::testing::RunAllTests();
}
