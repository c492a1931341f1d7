// RocksDbStore's measurements: appending them with per-trial sequence
// numbers, and listing or scanning a trial's measurements.
#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/write_batch.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"

namespace cairn {
namespace {

namespace keys = store_keys;
using store_internal::CheckId;
using store_internal::FromRocks;
using store_internal::ToSlice;
using store_internal::ToView;

}  // namespace

absl::StatusOr<int64_t> RocksDbStore::ReadNextSeq(rocksdb::Iterator* it,
                                                  int64_t study_id,
                                                  int64_t trial_id) const {
  const std::string prefix = keys::MeasurementTrialPrefix(study_id, trial_id);
  it->SeekForPrev(keys::PrefixEnd(prefix));
  if (!it->Valid()) {
    if (absl::Status st =
            FromRocks(it->status(),
                      absl::StrCat("seeking ", prefix, " in store at ", path_));
        !st.ok()) {
      return st;
    }
    return 0;
  }
  const absl::string_view key = ToView(it->key());
  if (!absl::StartsWith(key, prefix)) return 0;
  int64_t s = 0;
  int64_t t = 0;
  int64_t seq = 0;
  if (!keys::ParseMeasurementKey(key, &s, &t, &seq)) {
    return absl::DataLossError(
        absl::StrCat("store at ", path_, ": bad measurement key ", key));
  }
  return seq + 1;
}

absl::Status RocksDbStore::AppendMeasurements(
    const std::vector<MeasurementWrite>& measurements) {
  absl::StatusOr<std::shared_ptr<PendingWrite>> write =
      EnqueueAppendMeasurements(measurements);
  if (!write.ok()) return write.status();
  return Await(*write);
}

absl::StatusOr<std::shared_ptr<PendingWrite>>
RocksDbStore::EnqueueAppendMeasurements(
    const std::vector<MeasurementWrite>& measurements) {
  if (measurements.empty()) return std::shared_ptr<PendingWrite>();
  for (size_t i = 0; i < measurements.size(); ++i) {
    const MeasurementWrite& m = measurements[i];
    if (absl::Status st =
            CheckId(absl::StrCat("measurements[", i, "].study_id"), m.study_id);
        !st.ok()) {
      return st;
    }
    if (absl::Status st =
            CheckId(absl::StrCat("measurements[", i, "].trial_id"), m.trial_id);
        !st.ok()) {
      return st;
    }
  }

  // Shared: a DeleteStudy/DeleteTrial is queued either before us (then the
  // check below fails) or after us, so no measurement outlives its trial.
  absl::ReaderMutexLock lock(&studies_mu_);
  int64_t last_checked = 0;
  for (const MeasurementWrite& m : measurements) {
    if (m.study_id == last_checked) continue;
    if (absl::Status st = CheckStudyExists(m.study_id); !st.ok()) return st;
    last_checked = m.study_id;
  }

  std::vector<int64_t> seqs(measurements.size());
  // Allocate and enqueue under seq_mu_: sequence numbers reach the queue
  // (and disk) in allocation order.
  absl::MutexLock seq_lock(&seq_mu_);
  std::unique_ptr<rocksdb::Iterator> it;
  for (size_t i = 0; i < measurements.size(); ++i) {
    const MeasurementWrite& m = measurements[i];
    auto [entry, inserted] =
        next_seq_.try_emplace(std::make_pair(m.study_id, m.trial_id), 0);
    if (inserted) {
      if (it == nullptr) it.reset(db_->NewIterator(rocksdb::ReadOptions()));
      absl::StatusOr<int64_t> next =
          ReadNextSeq(it.get(), m.study_id, m.trial_id);
      if (!next.ok()) {
        next_seq_.erase(entry);
        return next.status();
      }
      entry->second = *next;
    }
    // Seqs handed out for a write that then fails leave a gap; ordering is
    // all that matters.
    seqs[i] = entry->second++;
  }

  rocksdb::WriteBatch batch;
  std::string value;
  for (size_t i = 0; i < measurements.size(); ++i) {
    const MeasurementWrite& m = measurements[i];
    m.measurement.SerializeToString(&value);
    batch.Put(keys::MeasurementKey(m.study_id, m.trial_id, seqs[i]), value);
  }
  return Enqueue(std::move(batch), "measurements");
}

absl::StatusOr<std::vector<cairn::v1::Measurement>>
RocksDbStore::ListMeasurements(int64_t study_id, int64_t trial_id) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  if (absl::Status st = CheckId("trial_id", trial_id); !st.ok()) return st;
  {
    absl::ReaderMutexLock lock(&studies_mu_);
    if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  }
  std::vector<cairn::v1::Measurement> result;
  absl::Status st = ForEachWithPrefix(
      nullptr, keys::MeasurementTrialPrefix(study_id, trial_id),
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        if (!result.emplace_back().ParseFromArray(
                value.data(), static_cast<int>(value.size()))) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad measurement record at key ", key));
        }
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  return result;
}

absl::Status RocksDbStore::ScanMeasurements(int64_t study_id, int64_t trial_id,
                                            const MeasurementScan& scan,
                                            const MeasurementVisitor& visit) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  if (absl::Status st = CheckId("trial_id", trial_id); !st.ok()) return st;
  if (scan.start_seq < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("start_seq: must be >= 0, got ", scan.start_seq));
  }
  {
    absl::ReaderMutexLock lock(&studies_mu_);
    if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  }
  const std::string prefix = keys::MeasurementTrialPrefix(study_id, trial_id);
  const std::string end = keys::PrefixEnd(prefix);
  rocksdb::Slice lower(prefix);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  const std::string start =
      keys::MeasurementKey(study_id, trial_id, scan.start_seq);
  if (scan.reverse) {
    it->SeekForPrev(ToSlice(start));
  } else {
    it->Seek(ToSlice(start));
  }
  cairn::v1::Measurement m;
  for (; it->Valid(); scan.reverse ? it->Prev() : it->Next()) {
    const absl::string_view key = ToView(it->key());
    const absl::string_view value = ToView(it->value());
    int64_t s = 0;
    int64_t t = 0;
    int64_t seq = 0;
    if (!keys::ParseMeasurementKey(key, &s, &t, &seq) ||
        !m.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      return absl::DataLossError(absl::StrCat(
          "store at ", path_, ": bad measurement record at key ", key));
    }
    if (!visit(seq, m)) return absl::OkStatus();
  }
  return FromRocks(it->status(),
                   absl::StrCat("scanning ", prefix, " in store at ", path_));
}

}  // namespace cairn
