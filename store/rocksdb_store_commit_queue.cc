// RocksDbStore's commit queue: writes are queued in order and the first
// waiter leads a group of them into one RocksDB write (see rocksdb_store.h).
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rocksdb/write_batch.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"

namespace cairn {
namespace {

using store_internal::FreeBytes;
using store_internal::FromRocks;
using store_internal::ToSlice;

// Largest group a leader writes at once (it always takes at least one write).
constexpr size_t kMaxGroupBytes = 1 << 20;

// Replays a batch's operations into another batch (merging queued writes into
// one group). Only the default column family and Put/Delete/DeleteRange are
// used by this store; anything else is refused.
class AppendHandler : public rocksdb::WriteBatch::Handler {
 public:
  explicit AppendHandler(rocksdb::WriteBatch* out) : out_(out) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    if (cf != 0) return rocksdb::Status::InvalidArgument("column family");
    return out_->Put(key, value);
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    if (cf != 0) return rocksdb::Status::InvalidArgument("column family");
    return out_->Delete(key);
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    if (cf != 0) return rocksdb::Status::InvalidArgument("column family");
    return out_->DeleteRange(begin, end);
  }

 private:
  rocksdb::WriteBatch* out_;
};

// The error of a failed write: ResourceExhausted when the disk is full,
// Unavailable for other I/O errors (the store recovers from both), as
// FromRocks otherwise.
absl::Status WriteError(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok() || s.IsNoSpace()) return FromRocks(s, context);
  if (s.IsIOError()) {
    return absl::UnavailableError(absl::StrCat(context, ": ", s.ToString()));
  }
  return FromRocks(s, context);
}

// A copy of `s` that shares no heap state with it. A non-OK absl::Status
// shares its message by reference count; statuses handed to other threads
// are detached so that no count is ever touched from two threads (TSan
// reported the count's fast path as a race).
absl::Status Detached(const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), s.message());
}

}  // namespace

absl::StatusOr<std::shared_ptr<PendingWrite>> RocksDbStore::Enqueue(
    rocksdb::WriteBatch batch, std::string what) {
  std::shared_ptr<PendingWrite> write(
      new PendingWrite(std::move(batch), std::move(what)));
  absl::MutexLock lock(&queue_mu_);
  if (!failed_.ok()) return Detached(failed_);
  queue_.push_back(write);
  return write;
}

absl::Status RocksDbStore::Await(const std::shared_ptr<PendingWrite>& write) {
  if (write == nullptr) return absl::OkStatus();
  absl::MutexLock lock(&queue_mu_);
  while (!write->done) {
    // Not done and no leader: the write is still in queue_, so leading a
    // group makes progress. Otherwise wait for the current leader.
    if (!leader_active_) {
      LeadOneGroup();
    } else {
      queue_cv_.Wait(&queue_mu_);
    }
  }
  return Detached(write->status);
}

void RocksDbStore::LeadOneGroup() {
  leader_active_ = true;
  std::vector<std::shared_ptr<PendingWrite>> group;
  size_t bytes = 0;
  while (!queue_.empty()) {
    const size_t size = queue_.front()->batch.GetDataSize();
    if (!group.empty() && bytes + size > kMaxGroupBytes) break;
    bytes += size;
    group.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  const absl::Status failed = Detached(failed_);
  const bool inject_failure = fail_writes_;
  queue_mu_.Unlock();

  absl::Status status = failed;
  bool wrote = false;
  bool rocksdb_failed = false;
  if (status.ok() && !group.empty()) {
    rocksdb::WriteBatch merged;
    rocksdb::WriteBatch* batch = &group.front()->batch;
    rocksdb::Status s;
    if (group.size() > 1) {
      AppendHandler handler(&merged);
      for (const auto& w : group) {
        s = w->batch.Iterate(&handler);
        if (!s.ok()) break;
      }
      batch = &merged;
    }
    if (s.ok() && batch->Count() > 0) {
      if (inject_failure) {
        s = rocksdb::Status::IOError("injected write failure",
                                     "RocksDbStore::TEST_FailWrites");
      } else {
        s = CheckRoomToWrite();
        if (s.ok()) {
          wrote = true;
          s = db_->Write(write_options_, batch);
          rocksdb_failed = !s.ok();
        }
      }
    }
    status = WriteError(
        s, absl::StrCat("writing ",
                        group.size() == 1
                            ? group.front()->what
                            : absl::StrCat(group.size(), " grouped writes (",
                                           group.front()->what, ", ...)"),
                        " to store at ", path_));
  }

  queue_mu_.Lock();
  if (wrote) ++synced_writes_;
  if (rocksdb_failed) rocksdb_failed_ = true;
  if (!status.ok() && failed_.ok()) {
    // Everything queued from now on must fail too: a later write must never
    // land without this one.
    failed_ = absl::Status(
        status.code(),
        absl::StrCat("store write failed: ", status.message(),
                     "; the store at ", path_,
                     " refuses writes until it is writable again"));
    writable_.store(false, std::memory_order_release);
  }
  for (const auto& w : group) {
    w->done = true;
    w->status = Detached(status);
  }
  leader_active_ = false;
  queue_cv_.SignalAll();
}

absl::Status RocksDbStore::Write(rocksdb::WriteBatch* batch,
                                 absl::string_view what) {
  absl::StatusOr<std::shared_ptr<PendingWrite>> write =
      Enqueue(std::move(*batch), std::string(what));
  if (!write.ok()) return write.status();
  return Await(*write);
}

int64_t RocksDbStore::TEST_SyncedWrites() const {
  absl::MutexLock lock(&queue_mu_);
  return synced_writes_;
}

absl::Status RocksDbStore::WriteHealth() {
  if (writable_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&queue_mu_);
  return Detached(failed_);
}

absl::Status RocksDbStore::Resume() {
  {
    absl::MutexLock lock(&queue_mu_);
    if (failed_.ok()) return absl::OkStatus();
  }
  // The caches may be ahead of the disk (numbers of failed writes): read
  // them afresh. Writes are refused meanwhile, so nothing can race ahead.
  {
    absl::MutexLock lock(&seq_mu_);
    next_seq_.clear();
  }
  {
    absl::MutexLock lock(&max_mu_);
    max_trial_.clear();
  }
  absl::MutexLock lock(&queue_mu_);
  if (failed_.ok()) return absl::OkStatus();
  // Enqueue refuses writes while failed_ is set, so the queue drains.
  while (!queue_.empty() || leader_active_) {
    if (!leader_active_) {
      LeadOneGroup();
    } else {
      queue_cv_.Wait(&queue_mu_);
    }
  }
  if (fail_writes_) return Detached(failed_);
  rocksdb::Status s = CheckRoomToWrite();
  // RocksDB itself is fine unless one of its writes failed (our own
  // free-space check stops writes before RocksDB runs out of space).
  if (s.ok() && rocksdb_failed_) s = db_->Resume();
  if (s.ok() && rocksdb_failed_) s = SwitchToFreshWal();
  if (!s.ok()) return absl::Status(failed_.code(), ResumeFailure(s));
  failed_ = absl::OkStatus();
  rocksdb_failed_ = false;
  writable_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

std::string RocksDbStore::ResumeFailure(const rocksdb::Status& s) const {
  if (s.IsNoSpace() || s.IsBusy()) {
    return absl::StrCat(failed_.message(), " (still: ", s.ToString(), ")");
  }
  // E.g. EIO on the WAL: RocksDB 7.8 treats it as unrecoverable in place.
  return absl::StrCat(failed_.message(), " (RocksDB cannot resume from ",
                      s.ToString(),
                      "; restart cairnd to reopen the store: every "
                      "acknowledged write is kept)");
}

rocksdb::Status RocksDbStore::CheckRoomToWrite() const {
  absl::StatusOr<uint64_t> free = FreeBytes(path_);
  if (!free.ok() || *free >= kMinFreeBytesToWrite) return rocksdb::Status::OK();
  return rocksdb::Status::NoSpace(absl::StrCat(
      "only ", *free >> 20, " MB free on its disk; the store writes only with ",
      kMinFreeBytesToWrite >> 20,
      " MB free (room for a memtable flush and a new WAL file)"));
}

rocksdb::Status RocksDbStore::SwitchToFreshWal() {
  // RocksDB 7.8 may resume on the WAL writer whose append failed, and that
  // writer refuses every later append (Debian's build asserts: SIGABRT).
  // A write that skips the WAL makes the memtable non-empty; flushing it
  // then starts a new WAL (and makes the write durable in an SST).
  rocksdb::WriteOptions no_wal;
  no_wal.disableWAL = true;
  rocksdb::Status s = db_->Put(no_wal, ToSlice(store_keys::kLastResumeKey),
                               absl::StrCat(absl::ToUnixSeconds(absl::Now())));
  if (!s.ok()) return s;
  rocksdb::FlushOptions flush;
  flush.allow_write_stall = true;
  return db_->Flush(flush);
}

void RocksDbStore::TEST_FailWrites(bool fail) {
  absl::MutexLock lock(&queue_mu_);
  fail_writes_ = fail;
}

}  // namespace cairn
