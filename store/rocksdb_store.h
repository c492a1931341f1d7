// RocksDB implementation of Store. Private to store/: everyone else uses
// Store::Open from store/store.h.
#ifndef CAIRN_STORE_ROCKSDB_STORE_H_
#define CAIRN_STORE_ROCKSDB_STORE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "store/durable_mark.h"
#include "store/store.h"

namespace cairn {

// Schema version this binary writes and understands. Open refuses a store
// whose meta/schema_version is larger. 2: every study has its c/ summary
// record (a version-1 store becomes 2 at MarkSummariesComplete), so a binary
// that does not keep them current (version 1) cannot open the store.
inline constexpr int64_t kSchemaVersion = 2;
// The first version whose c/ records are trusted.
inline constexpr int64_t kSummarySchemaVersion = 2;

// Free space the store's disk must have for a write to be attempted: two
// memtables (a flush) plus a preallocated WAL file, with some slack. See
// StoreDbOptions (write_buffer_size).
inline constexpr uint64_t kMinFreeBytesToWrite = uint64_t{40} << 20;

class RocksDbStore;

// A queued write. batch and what are immutable once queued; done and status
// are guarded by the owning store's queue_mu_.
class PendingWrite {
 private:
  friend class RocksDbStore;
  PendingWrite(rocksdb::WriteBatch b, std::string w)
      : batch(std::move(b)), what(std::move(w)) {}
  rocksdb::WriteBatch batch;
  const std::string what;
  bool done = false;
  absl::Status status;
};

// Locking:
//  - studies_mu_ guards the in-memory study table (id -> display name) and
//    the study id counter. Operations that change which studies/trials exist
//    (CreateStudy, DeleteStudy, DeleteTrial) hold it exclusively from their
//    validation until their write is durable (they are rare); DeleteTrial
//    first drains the commit queue so that its existence check reads every
//    queued trial. Operations that only add to an existing study (PutTrials,
//    AppendMeasurements, UpdateStudy and their Enqueue* forms) hold it shared
//    while they validate and enqueue (not while they wait), so a deletion is
//    queued either before (then they see NotFound) or after them.
//  - seq_mu_ guards the per-trial measurement sequence cache, max_mu_ the
//    per-study max trial id cache. Each is held while numbers are allocated
//    and the write carrying them is enqueued, so numbers reach the queue (and
//    disk) in allocation order; never while waiting for a write.
//  - queue_mu_ guards the commit queue; held only to push, to pick a group
//    and to publish results, never across the RocksDB write.
// Lock order: studies_mu_, then seq_mu_ or max_mu_ (never both), then
// queue_mu_.
//
// Max trial id: PutTrials writes k/<study> in its batch whenever it raises the
// cached maximum; since raising and enqueueing happen under max_mu_, k/ only
// grows on disk. The reported maximum is still max(k/, largest t/ id) (stores
// written by older binaries may have k/ lagging). DeleteTrial always writes
// k/ = the cached maximum, so a deleted trial's id stays covered.
//
// Caches after a failed write: a failed write may leave the caches ahead of
// disk (seq numbers or a max id that never landed). That is harmless: the
// store refuses every write after a failure (see store.h), and gaps in seq
// numbers are allowed.
//
// Thread-safe.
class RocksDbStore final : public Store {
 public:
  // See Store::Open.
  static absl::StatusOr<std::unique_ptr<Store>> Open(
      const StoreOptions& options, const std::string& path);

  ~RocksDbStore() override;

  absl::StatusOr<int64_t> CreateStudy(cairn::v1::Study study) override;
  absl::Status UpdateStudy(int64_t study_id,
                           const cairn::v1::Study& study) override;
  absl::Status DeleteStudy(int64_t study_id) override;
  absl::StatusOr<std::vector<StoredStudy>> LoadAll() override;
  absl::StatusOr<std::vector<StoredStudy>> LoadStudies() override;
  absl::StatusOr<StoredStudy> LoadStudy(int64_t study_id) override;
  absl::Status PutSummary(int64_t study_id,
                          const TrialSummary& summary) override;
  absl::Status MarkSummariesComplete() override;
  using StudyStore::DeleteTrial;
  using StudyStore::EnqueuePutTrials;
  using StudyStore::PutTrials;
  absl::Status PutTrials(int64_t study_id,
                         const std::vector<cairn::v1::Trial>& trials,
                         const TrialSummary* summary) override;
  absl::Status DeleteTrial(int64_t study_id, int64_t trial_id,
                           const TrialSummary* summary) override;
  absl::Status AppendMeasurements(
      const std::vector<MeasurementWrite>& measurements) override;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueUpdateStudy(
      int64_t study_id, const cairn::v1::Study& study) override;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t study_id, const std::vector<cairn::v1::Trial>& trials,
      const TrialSummary* summary) override;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueAppendMeasurements(
      const std::vector<MeasurementWrite>& measurements) override;
  absl::Status Await(const std::shared_ptr<PendingWrite>& write) override;
  absl::StatusOr<std::vector<cairn::v1::Measurement>> ListMeasurements(
      int64_t study_id, int64_t trial_id) override;
  absl::Status ScanMeasurements(int64_t study_id, int64_t trial_id,
                                const MeasurementScan& scan,
                                const MeasurementVisitor& visit) override;
  uint64_t ApproximateSizeBytes() override;
  absl::Status WriteHealth() override;
  absl::Status Resume() override;
  absl::StatusOr<uint64_t> AvailableBytes() override;
  // See rocksdb_store_checkpoint.cc.
  absl::StatusOr<uint64_t> Checkpoint(const std::string& dir) override;
  // See rocksdb_store_tokens.cc.
  absl::Status PutTokenRecord(const cairn::v1::TokenRecord& record) override;
  absl::StatusOr<std::vector<cairn::v1::TokenRecord>> LoadTokenRecords()
      override;
  // See rocksdb_store_jobs.cc.
  absl::Status PutJobRecord(const cairn::v1::JobRecord& record) override;
  absl::Status DeleteJobRecord(const std::string& job_id) override;
  absl::StatusOr<std::vector<cairn::v1::JobRecord>> LoadJobRecords() override;
  // See rocksdb_store_audit.cc.
  absl::Status PutAuditEvent(int64_t id, const cairn::v1::AuditEvent& event,
                             int64_t delete_before) override;
  absl::Status DeleteAuditEventsBefore(int64_t before) override;
  absl::Status ScanAuditEvents(int64_t start_id,
                               const AuditVisitor& visit) override;
  absl::StatusOr<int64_t> LastAuditEventId() override;

  // Number of RocksDB writes the commit queue has issued (one per group, so
  // fewer than the number of writes when they were grouped). For tests.
  int64_t TEST_SyncedWrites() const;
  // fail: every later RocksDB write of the commit queue fails with an
  // IOError, as a failing disk would; false: writes reach RocksDB again
  // (Resume() then succeeds). For tests of the failure path.
  void TEST_FailWrites(bool fail = true);

 private:
  RocksDbStore(std::string path, std::unique_ptr<rocksdb::Env> env,
               std::unique_ptr<rocksdb::DB> db, bool sync);

  // Reads/initialises meta/ keys and loads the study table.
  absl::Status Init();

  // Queues `batch` (moved from) in the commit queue; `what` names it in
  // errors. Fails (nothing queued) once the store has failed.
  absl::StatusOr<std::shared_ptr<PendingWrite>> Enqueue(
      rocksdb::WriteBatch batch, std::string what);

  // Enqueue + Await.
  absl::Status Write(rocksdb::WriteBatch* batch, absl::string_view what);

  // NoSpace when the store's disk has less than kMinFreeBytesToWrite free:
  // writes stop there, before RocksDB itself runs out of space (a RocksDB
  // that hit ENOSPC on its WAL may be unable to resume without a restart).
  rocksdb::Status CheckRoomToWrite() const;

  // The error Resume returns when RocksDB did not recover (`s`): says
  // whether waiting helps or only a reopen (restart) does.
  std::string ResumeFailure(const rocksdb::Status& s) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);

  // After DB::Resume: moves RocksDB onto a new WAL file (writes
  // meta/last_resume without the WAL and flushes). REQUIRES: no other
  // writer (the store is failed and queue_mu_ held).
  rocksdb::Status SwitchToFreshWal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);

  // Writes one group (the writes at the queue front) as leader.
  // REQUIRES: queue_mu_ held and leader_active_ false.
  void LeadOneGroup() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);

  // Returns NotFound unless the study exists. REQUIRES: studies_mu_ held.
  absl::Status CheckStudyExists(int64_t study_id) const
      ABSL_SHARED_LOCKS_REQUIRED(studies_mu_);

  // Next unused measurement sequence number of a trial, read from disk
  // (one past the last m/<study>/<trial>/ key, 0 if there is none).
  absl::StatusOr<int64_t> ReadNextSeq(rocksdb::Iterator* it, int64_t study_id,
                                      int64_t trial_id) const;

  // max(k/<study>, largest t/<study>/ id) as on disk now; 0 if none.
  absl::StatusOr<int64_t> ReadMaxTrialId(int64_t study_id) const;

  // Cached max trial id of a study, read from disk on first use.
  absl::StatusOr<int64_t*> CachedMaxTrialId(int64_t study_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(max_mu_);

  // Reads the study records (s/) and their k/ and c/ records from
  // `snapshot`, in study id order, with an index id -> position.
  absl::StatusOr<std::vector<StoredStudy>> ReadStudies(
      const rocksdb::Snapshot* snapshot,
      absl::flat_hash_map<int64_t, size_t>* index) const;

  // Calls fn(key, value) for each key starting with `prefix`, in key order,
  // reading from `snapshot` (nullptr: the latest state). Stops at and returns
  // the first non-OK status fn returns.
  absl::Status ForEachWithPrefix(
      const rocksdb::Snapshot* snapshot, absl::string_view prefix,
      absl::FunctionRef<absl::Status(absl::string_view key,
                                     absl::string_view value)>
          fn) const;

  const std::string path_;
  // The DB's Env (see wal_file_system.h); declared first so it outlives db_.
  const std::unique_ptr<rocksdb::Env> env_;
  const std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;
  // Set once Open succeeds; reset first in the destructor, after the queue
  // drained, so that its last mark covers every write.
  std::unique_ptr<DurableMarkRecorder> durable_mark_;

  mutable absl::Mutex studies_mu_;
  // Existing studies: id -> display name.
  absl::flat_hash_map<int64_t, std::string> studies_
      ABSL_GUARDED_BY(studies_mu_);
  int64_t next_study_id_ ABSL_GUARDED_BY(studies_mu_) = 1;
  // meta/schema_version as on disk (Init, MarkSummariesComplete).
  std::atomic<int64_t> schema_version_{0};

  absl::Mutex seq_mu_ ABSL_ACQUIRED_AFTER(studies_mu_);
  // (study id, trial id) -> next measurement sequence number. Entries are
  // created lazily from disk and erased when the trial or study is deleted.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> next_seq_
      ABSL_GUARDED_BY(seq_mu_);

  absl::Mutex max_mu_ ABSL_ACQUIRED_AFTER(studies_mu_);
  // study id -> largest trial id ever handed to PutTrials (or on disk).
  // Entries are created lazily and erased when the study is deleted.
  absl::flat_hash_map<int64_t, int64_t> max_trial_ ABSL_GUARDED_BY(max_mu_);

  mutable absl::Mutex queue_mu_ ABSL_ACQUIRED_AFTER(seq_mu_, max_mu_);
  // Writes not yet picked by a leader, in enqueue order.
  std::deque<std::shared_ptr<PendingWrite>> queue_ ABSL_GUARDED_BY(queue_mu_);
  // A leader is writing a group (with queue_mu_ released).
  bool leader_active_ ABSL_GUARDED_BY(queue_mu_) = false;
  // Signalled when a leader finishes a group.
  absl::CondVar queue_cv_;
  // Set by the first failed write; every later write fails with it.
  absl::Status failed_ ABSL_GUARDED_BY(queue_mu_);
  // The failure came from a RocksDB write (so RocksDB must resume too).
  bool rocksdb_failed_ ABSL_GUARDED_BY(queue_mu_) = false;
  // failed_.ok(), readable without queue_mu_ (WriteHealth's fast path).
  std::atomic<bool> writable_{true};
  // A write not synced (an audit event) since the durable mark's last look.
  std::atomic<bool> unsynced_writes_{false};
  // An unsynced write failed: the WAL writer may be broken, so the durable
  // mark is no longer recorded (until a restart).
  std::atomic<bool> unsynced_write_failed_{false};
  int64_t synced_writes_ ABSL_GUARDED_BY(queue_mu_) = 0;
  bool fail_writes_ ABSL_GUARDED_BY(queue_mu_) = false;
};

}  // namespace cairn

#endif  // CAIRN_STORE_ROCKSDB_STORE_H_
