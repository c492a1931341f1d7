// Tests of BackupStore (store/backup.h) against real stores: a backup taken
// while writer threads keep writing holds every write acknowledged before it
// began and opens with Store::Open; bad destinations are refused by name.
#include "store/backup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/file_system.h"
#include "store/store.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kWriters = 4;

cairn::v1::Trial MakeTrial(int64_t id) {
  cairn::v1::Trial trial;
  trial.set_id(id);
  trial.set_state(cairn::v1::Trial::ACTIVE);
  cairn::v1::Parameter* p = trial.add_parameters();
  p->set_parameter_id("lr");
  p->mutable_value()->set_number_value(0.001 * static_cast<double>(id));
  return trial;
}

cairn::v1::Measurement MakeMeasurement(int64_t step) {
  cairn::v1::Measurement m;
  m.set_step_count(step);
  cairn::v1::Metric* metric = m.add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(1.0 / static_cast<double>(step + 1));
  return m;
}

// Counts acknowledged writes; Await blocks until `n` more have been made.
class AckCounter {
 public:
  void Add() {
    absl::MutexLock lock(&mu_);
    ++count_;
  }
  int64_t Get() {
    absl::MutexLock lock(&mu_);
    return count_;
  }
  // Returns false if fewer than `n` more arrive within `timeout`.
  bool AwaitMore(int64_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    const int64_t target = count_ + n;
    auto reached = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return count_ >= target;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }

 private:
  absl::Mutex mu_;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

// A file system whose LinkFile (only RocksDB's Checkpoint links files), once
// armed, first waits until the writers have made more writes: proof that the
// live store takes writes while a checkpoint is being made. Or, with
// FailLinks(), fails like a broken disk: a checkpoint that fails half-way.
class WaitingLinkFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  WaitingLinkFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                        AckCounter* acks)
      : rocksdb::FileSystemWrapper(std::move(base)), acks_(acks) {}
  const char* Name() const override { return "WaitingLinkFileSystem"; }
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& dst,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
    if (fail_links_) return rocksdb::IOStatus::IOError("injected link error");
    if (armed_.exchange(false)) {
      writes_during_link_ = acks_->AwaitMore(50, absl::Seconds(10));
    }
    return target()->LinkFile(src, dst, options, dbg);
  }
  void Arm() { armed_ = true; }
  void FailLinks() { fail_links_ = true; }
  bool writes_during_link() const { return writes_during_link_; }

 private:
  AckCounter* acks_;
  std::atomic<bool> armed_{false};
  std::atomic<bool> fail_links_{false};
  std::atomic<bool> writes_during_link_{false};
};

// What one writer thread had acknowledged: trial id -> measurements.
using Acked = std::vector<std::pair<int64_t, int64_t>>;

class BackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = tmp_.path() + "/data";
    store_dir_ = data_dir_ + "/" + kStoreDirName;
    fs::create_directories(store_dir_);
    StoreOptions options;
    options.wrap_file_system = [this](std::shared_ptr<rocksdb::FileSystem> b) {
      auto wrapped = std::make_shared<WaitingLinkFileSystem>(b, &acks_);
      link_fs_ = wrapped.get();
      return wrapped;
    };
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(options, store_dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    cairn::v1::Study study;
    study.set_display_name("backup-test");
    absl::StatusOr<int64_t> id = store_->CreateStudy(study);
    ASSERT_TRUE(id.ok()) << id.status();
    study_id_ = *id;
    absl::MutexLock lock(&mu_);
    acked_.resize(kWriters);
  }

  // Writer `w` writes trials w+1, w+1+kWriters, ... each with 3
  // measurements (one write each), recording every acknowledged write in
  // acked_[w], until stop_.
  void Write(int w) {
    for (int64_t id = w + 1; !stop_.load(); id += kWriters) {
      absl::Status s = store_->PutTrials(study_id_, {MakeTrial(id)});
      if (s.ok()) Ack(w, id, 0);
      for (int64_t step = 0; s.ok() && step < 3; ++step) {
        s = store_->AppendMeasurements(
            {{study_id_, id, MakeMeasurement(step)}});
        if (s.ok()) Ack(w, id, step + 1);
      }
      if (!s.ok()) {
        absl::MutexLock lock(&mu_);
        write_errors_.push_back(s);
        return;
      }
    }
  }

  void Ack(int w, int64_t trial_id, int64_t measurements) {
    {
      absl::MutexLock lock(&mu_);
      if (measurements == 0) {
        acked_[w].emplace_back(trial_id, 0);
      } else {
        acked_[w].back().second = measurements;
      }
    }
    acks_.Add();
  }

  std::vector<Acked> SnapshotAcked() {
    absl::MutexLock lock(&mu_);
    return acked_;
  }

  testing::TempDir tmp_;
  std::string data_dir_;
  std::string store_dir_;
  AckCounter acks_;
  WaitingLinkFileSystem* link_fs_ = nullptr;
  std::unique_ptr<Store> store_;
  int64_t study_id_ = 0;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::vector<Acked> acked_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> write_errors_ ABSL_GUARDED_BY(mu_);
};

TEST_F(BackupTest, HoldsEveryWriteAcknowledgedBeforeItWhileWritesGoOn) {
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([this, w] { Write(w); });
  ASSERT_TRUE(acks_.AwaitMore(400, absl::Seconds(20)));

  link_fs_->Arm();
  const std::vector<Acked> before = SnapshotAcked();
  const std::string dest = tmp_.path() + "/backup";
  absl::StatusOr<BackupResult> result = BackupStore(*store_, data_dir_, dest);
  const int64_t acks_at_return = acks_.Get();
  // The live store goes on taking writes after the backup, too.
  const bool writes_after = acks_.AwaitMore(50, absl::Seconds(10));
  stop_ = true;
  for (std::thread& t : writers) t.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(link_fs_->writes_during_link());
  EXPECT_TRUE(writes_after);
  {
    absl::MutexLock lock(&mu_);
    EXPECT_TRUE(write_errors_.empty()) << write_errors_.front();
  }

  int64_t trials_before = 0;
  for (const Acked& a : before) trials_before += static_cast<int64_t>(a.size());
  EXPECT_EQ(result->path, dest);
  EXPECT_EQ(result->studies, 1);
  EXPECT_GE(result->trials, trials_before);
  EXPECT_LT(result->trials, acks_at_return);
  EXPECT_GT(result->sequence_number, 0u);
  EXPECT_GT(result->files, 0);
  EXPECT_GT(result->size_bytes, 0u);

  StoreOptions options;
  options.create_if_missing = false;
  absl::StatusOr<std::unique_ptr<Store>> copy =
      Store::Open(options, dest + "/" + kStoreDirName);
  ASSERT_TRUE(copy.ok()) << copy.status();
  absl::StatusOr<std::vector<StoredStudy>> studies = (*copy)->LoadAll();
  ASSERT_TRUE(studies.ok()) << studies.status();
  ASSERT_EQ(studies->size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(studies->front().trials.size()),
            result->trials);
  std::vector<int64_t> ids;
  for (const cairn::v1::Trial& t : studies->front().trials) {
    ids.push_back(t.id());
  }
  for (const Acked& acked : before) {
    for (const auto& [trial_id, measurements] : acked) {
      ASSERT_TRUE(std::binary_search(ids.begin(), ids.end(), trial_id))
          << "trial " << trial_id << " acknowledged before the backup";
      absl::StatusOr<std::vector<cairn::v1::Measurement>> ms =
          (*copy)->ListMeasurements(study_id_, trial_id);
      ASSERT_TRUE(ms.ok()) << ms.status();
      ASSERT_GE(static_cast<int64_t>(ms->size()), measurements)
          << "trial " << trial_id;
    }
  }
  // The copy is a store of its own: it takes writes.
  EXPECT_TRUE((*copy)->PutTrials(study_id_, {MakeTrial(1000000)}).ok());
}

TEST_F(BackupTest, LeavesNoTemporaryDirectoryAndFillsAnEmptyDestination) {
  const std::string dest = tmp_.path() + "/empty";
  fs::create_directory(dest);
  absl::StatusOr<BackupResult> result =
      BackupStore(*store_, data_dir_, dest + "/");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->path, dest);
  EXPECT_EQ(result->studies, 1);
  EXPECT_TRUE(fs::exists(dest + "/" + kStoreDirName + "/CURRENT"));
  for (const auto& e : fs::directory_iterator(tmp_.path())) {
    EXPECT_THAT(e.path().filename().string(),
                ::testing::Not(HasSubstr(".tmp-")));
  }
}

TEST_F(BackupTest, FailedCheckpointLeavesNothingBehind) {
  ASSERT_TRUE(store_->PutTrials(study_id_, {MakeTrial(1)}).ok());
  link_fs_->FailLinks();
  const std::string dest = tmp_.path() + "/failed";
  absl::StatusOr<BackupResult> result = BackupStore(*store_, data_dir_, dest);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("injected link error"));
  EXPECT_FALSE(fs::exists(dest));
  for (const auto& e : fs::directory_iterator(tmp_.path())) {
    EXPECT_THAT(e.path().filename().string(),
                ::testing::Not(HasSubstr(".tmp-")));
  }
  // The live store is unharmed.
  EXPECT_TRUE(store_->PutTrials(study_id_, {MakeTrial(2)}).ok());
}

// Largest hard-link count among the table files (*.sst) under `dir`.
uintmax_t MaxSstLinks(const std::string& dir) {
  uintmax_t links = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".sst") {
      links = std::max(links, fs::hard_link_count(e.path()));
    }
  }
  return links;
}

TEST_F(BackupTest, LinksTableFilesOnTheSameFileSystem) {
  ASSERT_TRUE(store_->PutTrials(study_id_, {MakeTrial(1)}).ok());
  const std::string dest = tmp_.path() + "/linked";
  absl::StatusOr<BackupResult> result = BackupStore(*store_, data_dir_, dest);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->trials, 1);
  EXPECT_GE(MaxSstLinks(dest), 2u);
}

// Another file system (tmpfs in /dev/shm): RocksDB cannot link, so it copies.
TEST_F(BackupTest, CopiesTableFilesToAnotherFileSystem) {
  struct stat shm, tmp;
  if (stat("/dev/shm", &shm) != 0 || stat(tmp_.path().c_str(), &tmp) != 0 ||
      shm.st_dev == tmp.st_dev || access("/dev/shm", W_OK) != 0) {
    GTEST_SKIP() << "needs a writable /dev/shm on another file system";
  }
  ASSERT_TRUE(store_->PutTrials(study_id_, {MakeTrial(1)}).ok());
  char templ[] = "/dev/shm/cairn_backup_test_XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  const std::string dest = std::string(templ) + "/backup";
  absl::StatusOr<BackupResult> result = BackupStore(*store_, data_dir_, dest);
  const uintmax_t links = result.ok() ? MaxSstLinks(dest) : 0;
  fs::remove_all(templ);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->trials, 1);
  EXPECT_EQ(links, 1u);
}

// Expects BackupStore(dest) to fail with `code`, naming `dest` in the
// message, and to create nothing beside it.
void ExpectRefused(Store& store, const std::string& data_dir,
                   const std::string& dest, absl::StatusCode code,
                   const std::string& why) {
  absl::StatusOr<BackupResult> result = BackupStore(store, data_dir, dest);
  ASSERT_FALSE(result.ok()) << dest;
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr(dest));
  EXPECT_THAT(result.status().message(), HasSubstr(why));
  EXPECT_LT(result.status().message().size(), 1024u);
}

TEST_F(BackupTest, RefusesBadDestinationsByName) {
  const std::string full = tmp_.path() + "/full";
  fs::create_directories(full + "/x");
  ExpectRefused(*store_, data_dir_, full, absl::StatusCode::kFailedPrecondition,
                "non-empty");
  const std::string file = tmp_.path() + "/file";
  std::ofstream(file) << "x";
  ExpectRefused(*store_, data_dir_, file, absl::StatusCode::kFailedPrecondition,
                "not a directory");
  ExpectRefused(*store_, data_dir_, tmp_.path() + "/no/such",
                absl::StatusCode::kFailedPrecondition, "does not exist");
  ExpectRefused(*store_, data_dir_, "relative/backup",
                absl::StatusCode::kInvalidArgument, "absolute path");
  ExpectRefused(*store_, data_dir_, data_dir_ + "/backup",
                absl::StatusCode::kInvalidArgument, "inside the data dir");
  ExpectRefused(*store_, data_dir_, data_dir_,
                absl::StatusCode::kInvalidArgument, "inside the data dir");
  absl::StatusOr<BackupResult> dotted =
      BackupStore(*store_, data_dir_, tmp_.path() + "/x/../data/b");
  EXPECT_EQ(dotted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dotted.status().message(),  // Named as normalized.
              HasSubstr(data_dir_ + "/b' is inside the data dir"));
  fs::create_directory_symlink(data_dir_, tmp_.path() + "/link");
  ExpectRefused(*store_, data_dir_, tmp_.path() + "/link/b",
                absl::StatusCode::kInvalidArgument, "inside the data dir");
  absl::StatusOr<BackupResult> empty = BackupStore(*store_, data_dir_, "");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("non-empty"));
  // A long name is cut short in the message.
  const std::string long_dest = "relative/" + std::string(5000, 'a');
  absl::StatusOr<BackupResult> long_result =
      BackupStore(*store_, data_dir_, long_dest);
  EXPECT_EQ(long_result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(long_result.status().message().size(), 1024u);
  // Nothing was created on the way.
  for (const auto& e : fs::directory_iterator(tmp_.path())) {
    EXPECT_THAT(e.path().filename().string(),
                ::testing::Not(HasSubstr(".tmp-")));
  }
}

}  // namespace
}  // namespace cairn
