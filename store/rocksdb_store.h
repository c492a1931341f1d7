// RocksDB implementation of Store. Private to store/: everyone else uses
// Store::Open from store/store.h.
#ifndef CAIRN_STORE_ROCKSDB_STORE_H_
#define CAIRN_STORE_ROCKSDB_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "store/store.h"

namespace cairn {

// Schema version this binary writes and understands. Open refuses a store
// whose meta/schema_version is larger.
inline constexpr int64_t kSchemaVersion = 1;

// Locking:
//  - studies_mu_ guards the in-memory study table (id -> display name) and
//    the study id counter. Operations that change which studies/trials exist
//    (CreateStudy, DeleteStudy, DeleteTrial) hold it exclusively across their
//    RocksDB write; operations that only add to an existing study (PutTrials,
//    AppendMeasurements, UpdateStudy) hold it shared across theirs, so they
//    never race a deletion and still group-commit with each other.
//  - seq_mu_ guards the per-trial measurement sequence cache, max_mu_ the
//    per-study max trial id cache. Each is held only while numbers are
//    looked up or allocated, never across a write.
// Lock order: studies_mu_, then seq_mu_ or max_mu_ (never both).
//
// Max trial id: PutTrials writes k/<study> in its batch whenever it raises the
// cached maximum. Concurrent raisers may land out of order, leaving k/ below
// the largest trial id for a while; that trial's t/ key then exists, and the
// reported maximum is max(k/, largest t/ id). DeleteTrial (exclusive) always
// writes k/ = the cached maximum, so a deleted trial's id stays covered.
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
  absl::Status PutTrials(int64_t study_id,
                         const std::vector<cairn::v1::Trial>& trials) override;
  absl::Status DeleteTrial(int64_t study_id, int64_t trial_id) override;
  absl::Status AppendMeasurements(
      const std::vector<MeasurementWrite>& measurements) override;
  absl::StatusOr<std::vector<cairn::v1::Measurement>> ListMeasurements(
      int64_t study_id, int64_t trial_id) override;
  uint64_t ApproximateSizeBytes() override;

 private:
  RocksDbStore(std::string path, std::unique_ptr<rocksdb::DB> db, bool sync);

  // Reads/initialises meta/ keys and loads the study table.
  absl::Status Init();

  absl::Status Write(rocksdb::WriteBatch* batch, absl::string_view what);

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

  // Calls fn(key, value) for each key starting with `prefix`, in key order,
  // reading from `snapshot` (nullptr: the latest state). Stops at and returns
  // the first non-OK status fn returns.
  template <typename Fn>
  absl::Status ForEachWithPrefix(const rocksdb::Snapshot* snapshot,
                                 absl::string_view prefix, Fn fn) const;

  const std::string path_;
  const std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;

  mutable absl::Mutex studies_mu_;
  // Existing studies: id -> display name.
  absl::flat_hash_map<int64_t, std::string> studies_
      ABSL_GUARDED_BY(studies_mu_);
  int64_t next_study_id_ ABSL_GUARDED_BY(studies_mu_) = 1;

  absl::Mutex seq_mu_ ABSL_ACQUIRED_AFTER(studies_mu_);
  // (study id, trial id) -> next measurement sequence number. Entries are
  // created lazily from disk and erased when the trial or study is deleted.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> next_seq_
      ABSL_GUARDED_BY(seq_mu_);

  absl::Mutex max_mu_ ABSL_ACQUIRED_AFTER(studies_mu_);
  // study id -> largest trial id ever handed to PutTrials (or on disk).
  // Entries are created lazily and erased when the study is deleted.
  absl::flat_hash_map<int64_t, int64_t> max_trial_ ABSL_GUARDED_BY(max_mu_);
};

}  // namespace cairn

#endif  // CAIRN_STORE_ROCKSDB_STORE_H_
