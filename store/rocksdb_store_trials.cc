// RocksDbStore's trials: writing and deleting them, and the per-study max
// trial id (see rocksdb_store.h on how k/ keys stay monotonic).
#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "rocksdb/write_batch.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"
#include "store/summary_record.h"

namespace cairn {
namespace {

namespace keys = store_keys;
using store_internal::CheckId;
using store_internal::FromRocks;
using store_internal::ToView;

// Puts the study's summary record in `batch`, or deletes it (null: the
// writer does not know the summary, so the next start rebuilds it).
void PutOrDropSummary(int64_t study_id, const TrialSummary* summary,
                      rocksdb::WriteBatch* batch) {
  if (summary == nullptr) {
    batch->Delete(keys::SummaryKey(study_id));
  } else {
    batch->Put(keys::SummaryKey(study_id), keys::EncodeSummary(*summary));
  }
}

}  // namespace

absl::Status RocksDbStore::PutTrials(
    int64_t study_id, const std::vector<cairn::v1::Trial>& trials,
    const TrialSummary* summary) {
  absl::StatusOr<std::shared_ptr<PendingWrite>> write =
      EnqueuePutTrials(study_id, trials, summary);
  if (!write.ok()) return write.status();
  return Await(*write);
}

absl::Status RocksDbStore::PutSummary(int64_t study_id,
                                      const TrialSummary& summary) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  absl::StatusOr<std::shared_ptr<PendingWrite>> write;
  {
    absl::ReaderMutexLock lock(&studies_mu_);
    if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
    rocksdb::WriteBatch batch;
    PutOrDropSummary(study_id, &summary, &batch);
    write = Enqueue(std::move(batch), absl::StrCat("trial summary of ",
                                                   api::StudyName(study_id)));
  }
  if (!write.ok()) return write.status();
  return Await(*write);
}

absl::StatusOr<std::shared_ptr<PendingWrite>> RocksDbStore::EnqueuePutTrials(
    int64_t study_id, const std::vector<cairn::v1::Trial>& trials,
    const TrialSummary* summary) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  int64_t max_id = 0;
  for (size_t i = 0; i < trials.size(); ++i) {
    if (absl::Status st =
            CheckId(absl::StrCat("trials[", i, "].id"), trials[i].id());
        !st.ok()) {
      return st;
    }
    max_id = std::max(max_id, trials[i].id());
  }
  absl::ReaderMutexLock lock(&studies_mu_);
  if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  if (trials.empty()) return std::shared_ptr<PendingWrite>();
  rocksdb::WriteBatch batch;
  std::string value;
  for (const cairn::v1::Trial& trial : trials) {
    if (trial.measurements_size() == 0) {
      trial.SerializeToString(&value);
    } else {
      cairn::v1::Trial stripped = trial;
      stripped.clear_measurements();
      stripped.SerializeToString(&value);
    }
    batch.Put(keys::TrialKey(study_id, trial.id()), value);
  }
  PutOrDropSummary(study_id, summary, &batch);
  // Raise the cached max and enqueue under max_mu_, so k/ values reach the
  // queue (and disk) in increasing order.
  absl::MutexLock max_lock(&max_mu_);
  absl::StatusOr<int64_t*> cached = CachedMaxTrialId(study_id);
  if (!cached.ok()) return cached.status();
  if (max_id > **cached) {
    **cached = max_id;
    batch.Put(keys::MaxTrialKey(study_id), absl::StrCat(max_id));
  }
  return Enqueue(std::move(batch),
                 absl::StrCat("trials of ", api::StudyName(study_id)));
}

absl::Status RocksDbStore::DeleteTrial(int64_t study_id, int64_t trial_id,
                                       const TrialSummary* summary) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  if (absl::Status st = CheckId("trial_id", trial_id); !st.ok()) return st;
  absl::MutexLock lock(&studies_mu_);
  if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  {
    // Drain the queue (an empty write waits for everything before it), so
    // the check below sees trials whose writes are still queued. Holding
    // studies_mu_ exclusively keeps new trial writes out meanwhile.
    rocksdb::WriteBatch barrier;
    if (absl::Status st = Write(&barrier, "queue drain"); !st.ok()) return st;
  }
  const std::string trial_key = keys::TrialKey(study_id, trial_id);
  std::string ignored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), trial_key, &ignored);
  const std::string trial_name = api::TrialResourceName(study_id, trial_id);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("trial ", trial_name, " not found"));
  }
  if (!s.ok()) {
    return FromRocks(
        s, absl::StrCat("reading ", trial_name, " from store at ", path_));
  }
  rocksdb::WriteBatch batch;
  batch.Delete(trial_key);
  {
    // Record the max id so it outlives this trial's t/ key.
    absl::MutexLock max_lock(&max_mu_);
    absl::StatusOr<int64_t*> cached = CachedMaxTrialId(study_id);
    if (!cached.ok()) return cached.status();
    **cached = std::max(**cached, trial_id);
    batch.Put(keys::MaxTrialKey(study_id), absl::StrCat(**cached));
  }
  const std::string measurements =
      keys::MeasurementTrialPrefix(study_id, trial_id);
  batch.DeleteRange(measurements, keys::PrefixEnd(measurements));
  PutOrDropSummary(study_id, summary, &batch);
  if (absl::Status st = Write(&batch, absl::StrCat("deletion of ", trial_name));
      !st.ok()) {
    return st;
  }
  absl::MutexLock seq_lock(&seq_mu_);
  next_seq_.erase(std::make_pair(study_id, trial_id));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RocksDbStore::ReadMaxTrialId(int64_t study_id) const {
  int64_t max_id = 0;
  const std::string max_key = keys::MaxTrialKey(study_id);
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), max_key, &value);
  if (s.ok()) {
    if (!absl::SimpleAtoi(value, &max_id)) {
      return absl::DataLossError(absl::StrCat("store at ", path_, ": ", max_key,
                                              " holds \"", value,
                                              "\", not a trial id"));
    }
  } else if (!s.IsNotFound()) {
    return FromRocks(
        s, absl::StrCat("reading ", max_key, " from store at ", path_));
  }
  const std::string prefix = keys::TrialStudyPrefix(study_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(keys::PrefixEnd(prefix));
  if (it->Valid() && absl::StartsWith(ToView(it->key()), prefix)) {
    int64_t s_id = 0;
    int64_t trial_id = 0;
    if (!keys::ParseTrialKey(ToView(it->key()), &s_id, &trial_id)) {
      return absl::DataLossError(absl::StrCat(
          "store at ", path_, ": bad trial key ", ToView(it->key())));
    }
    max_id = std::max(max_id, trial_id);
  }
  if (absl::Status st =
          FromRocks(it->status(),
                    absl::StrCat("seeking ", prefix, " in store at ", path_));
      !st.ok()) {
    return st;
  }
  return max_id;
}

absl::StatusOr<int64_t*> RocksDbStore::CachedMaxTrialId(int64_t study_id) {
  auto [entry, inserted] = max_trial_.try_emplace(study_id, 0);
  if (inserted) {
    absl::StatusOr<int64_t> max_id = ReadMaxTrialId(study_id);
    if (!max_id.ok()) {
      max_trial_.erase(entry);
      return max_id.status();
    }
    entry->second = *max_id;
  }
  return &entry->second;
}

}  // namespace cairn
