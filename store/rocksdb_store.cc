// RocksDB implementation of Store, and Store::Open.
#include "store/rocksdb_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/write_batch.h"
#include "store/keys.h"
#include "store/wal_file_system.h"

namespace cairn {
namespace {

namespace keys = store_keys;

absl::string_view ToView(const rocksdb::Slice& s) {
  return absl::string_view(s.data(), s.size());
}

rocksdb::Slice ToSlice(absl::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}

// Converts a RocksDB status into an absl::Status, prefixing `context`.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(msg);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(msg);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}

std::string StudyName(int64_t study_id) {
  return absl::StrCat("studies/", study_id);
}

absl::Status CheckId(absl::string_view field, int64_t id) {
  if (id > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be > 0, got ", id));
}

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

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options,
                                                   const std::string& path) {
  return RocksDbStore::Open(options, path);
}

absl::StatusOr<std::unique_ptr<Store>> RocksDbStore::Open(
    const StoreOptions& options, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("store path must be non-empty");
  }
  std::unique_ptr<rocksdb::Env> env = NewStableSizeWalEnv();
  rocksdb::Options db_options;
  db_options.env = env.get();
  db_options.create_if_missing = options.create_if_missing;
  db_options.max_background_jobs = 2;
  // RocksDB's info LOG files: keep a few small ones.
  db_options.keep_log_file_num = 4;
  db_options.max_log_file_size = 8 << 20;

  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, path, &raw);
  if (!s.ok()) {
    const std::string lower = absl::AsciiStrToLower(s.ToString());
    if (s.IsIOError() && absl::StrContains(lower, "lock")) {
      return absl::UnavailableError(absl::StrCat(
          "store directory ", path,
          " is locked: another process (is another cairnd running?) or "
          "another Store in this process has it open (",
          s.ToString(), ")"));
    }
    if (!options.create_if_missing && s.IsInvalidArgument() &&
        absl::StrContains(lower, "does not exist")) {
      return absl::NotFoundError(
          absl::StrCat("store directory ", path,
                       " holds no database and create_if_missing is false (",
                       s.ToString(), ")"));
    }
    return FromRocks(s, absl::StrCat("opening store at ", path));
  }
  std::unique_ptr<RocksDbStore> store(new RocksDbStore(
      path, std::move(env), std::unique_ptr<rocksdb::DB>(raw), options.sync));
  if (absl::Status st = store->Init(); !st.ok()) return st;
  return std::unique_ptr<Store>(std::move(store));
}

RocksDbStore::RocksDbStore(std::string path, std::unique_ptr<rocksdb::Env> env,
                           std::unique_ptr<rocksdb::DB> db, bool sync)
    : path_(std::move(path)), env_(std::move(env)), db_(std::move(db)) {
  write_options_.sync = sync;
}

RocksDbStore::~RocksDbStore() {
  // Commit whatever is still queued (writes nobody awaited yet).
  absl::MutexLock lock(&queue_mu_);
  while (!queue_.empty() || leader_active_) {
    if (!leader_active_) {
      LeadOneGroup();
    } else {
      queue_cv_.Wait(&queue_mu_);
    }
  }
}

template <typename Fn>
absl::Status RocksDbStore::ForEachWithPrefix(const rocksdb::Snapshot* snapshot,
                                             absl::string_view prefix,
                                             Fn fn) const {
  const std::string end = keys::PrefixEnd(prefix);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(ToSlice(prefix)); it->Valid(); it->Next()) {
    if (absl::Status st = fn(ToView(it->key()), ToView(it->value()));
        !st.ok()) {
      return st;
    }
  }
  return FromRocks(it->status(),
                   absl::StrCat("scanning ", prefix, " in store at ", path_));
}

absl::Status RocksDbStore::Init() {
  // Schema version: written once, when the store is created.
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(),
                               ToSlice(keys::kSchemaVersionKey), &value);
  if (s.IsNotFound()) {
    rocksdb::WriteBatch batch;
    value = absl::StrCat(kSchemaVersion);
    batch.Put(ToSlice(keys::kSchemaVersionKey), value);
    batch.Put(ToSlice(keys::kNextStudyIdKey), "1");
    if (absl::Status st = Write(&batch, "schema version"); !st.ok()) return st;
  } else if (!s.ok()) {
    return FromRocks(s, absl::StrCat("reading ", keys::kSchemaVersionKey,
                                     " from store at ", path_));
  }
  int64_t version = 0;
  if (!absl::SimpleAtoi(value, &version) || version < 1) {
    return absl::DataLossError(
        absl::StrCat("store at ", path_, ": ", keys::kSchemaVersionKey,
                     " holds \"", value, "\", not a schema version"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("store at ", path_, " has schema version ", version,
                     ", newer than schema version ", kSchemaVersion,
                     " that this binary understands; run a newer cairnd"));
  }

  absl::MutexLock lock(&studies_mu_);
  s = db_->Get(rocksdb::ReadOptions(), ToSlice(keys::kNextStudyIdKey), &value);
  if (s.ok()) {
    if (!absl::SimpleAtoi(value, &next_study_id_) || next_study_id_ < 1) {
      return absl::DataLossError(
          absl::StrCat("store at ", path_, ": ", keys::kNextStudyIdKey,
                       " holds \"", value, "\", not a study id"));
    }
  } else if (!s.IsNotFound()) {
    return FromRocks(s, absl::StrCat("reading ", keys::kNextStudyIdKey,
                                     " from store at ", path_));
  }
  return ForEachWithPrefix(
      nullptr, keys::kStudyPrefix,
      [this](absl::string_view key, absl::string_view value)
          ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::Status {
            int64_t id = 0;
            cairn::v1::Study study;
            if (!keys::ParseStudyKey(key, &id) ||
                !study.ParseFromArray(value.data(),
                                      static_cast<int>(value.size()))) {
              return absl::DataLossError(absl::StrCat(
                  "store at ", path_, ": bad study record at key ", key));
            }
            studies_[id] = study.display_name();
            // Never hand out an id that is already on disk, whatever the
            // counter says.
            next_study_id_ = std::max(next_study_id_, id + 1);
            return absl::OkStatus();
          });
}

absl::StatusOr<std::shared_ptr<PendingWrite>> RocksDbStore::Enqueue(
    rocksdb::WriteBatch batch, std::string what) {
  std::shared_ptr<PendingWrite> write(
      new PendingWrite(std::move(batch), std::move(what)));
  absl::MutexLock lock(&queue_mu_);
  if (!failed_.ok()) return failed_;
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
  return write->status;
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
  const absl::Status failed = failed_;
  const bool inject_failure = fail_writes_;
  queue_mu_.Unlock();

  absl::Status status = failed;
  bool wrote = false;
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
      wrote = true;
      s = inject_failure
              ? rocksdb::Status::IOError("injected write failure",
                                         "RocksDbStore::TEST_FailWrites")
              : db_->Write(write_options_, batch);
    }
    status = FromRocks(
        s, absl::StrCat("writing ",
                        group.size() == 1
                            ? group.front()->what
                            : absl::StrCat(group.size(), " grouped writes (",
                                           group.front()->what, ", ...)"),
                        " to store at ", path_));
  }

  queue_mu_.Lock();
  if (wrote) ++synced_writes_;
  if (!status.ok() && failed_.ok()) {
    // Everything queued from now on must fail too: a later write must never
    // land without this one.
    failed_ = absl::UnavailableError(absl::StrCat(
        "store write failed: ", status.message(), "; the store at ", path_,
        " refuses writes until it is reopened"));
  }
  for (const auto& w : group) {
    w->done = true;
    w->status = status;
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

void RocksDbStore::TEST_FailWrites() {
  absl::MutexLock lock(&queue_mu_);
  fail_writes_ = true;
}

absl::Status RocksDbStore::CheckStudyExists(int64_t study_id) const {
  if (studies_.contains(study_id)) return absl::OkStatus();
  return absl::NotFoundError(
      absl::StrCat("study ", StudyName(study_id), " not found"));
}

absl::StatusOr<int64_t> RocksDbStore::CreateStudy(cairn::v1::Study study) {
  if (study.display_name().empty()) {
    return absl::InvalidArgumentError("study.display_name must be non-empty");
  }
  absl::MutexLock lock(&studies_mu_);
  const std::string name_key = keys::NameKey(study.display_name());
  std::string existing;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), name_key, &existing);
  if (s.ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("a study with display_name \"", study.display_name(),
                     "\" already exists (studies/", existing, ")"));
  }
  if (!s.IsNotFound()) {
    return FromRocks(
        s, absl::StrCat("reading ", name_key, " from store at ", path_));
  }
  const int64_t id = next_study_id_;
  study.set_name(StudyName(id));
  rocksdb::WriteBatch batch;
  batch.Put(ToSlice(keys::kNextStudyIdKey), absl::StrCat(id + 1));
  batch.Put(keys::StudyKey(id), study.SerializeAsString());
  batch.Put(name_key, absl::StrCat(id));
  // Bump the counter even if the write fails: a failed synced write may
  // still surface after recovery, and skipping an id is harmless.
  next_study_id_ = id + 1;
  if (absl::Status st = Write(&batch, StudyName(id)); !st.ok()) return st;
  studies_[id] = study.display_name();
  return id;
}

absl::Status RocksDbStore::UpdateStudy(int64_t study_id,
                                       const cairn::v1::Study& study) {
  absl::StatusOr<std::shared_ptr<PendingWrite>> write =
      EnqueueUpdateStudy(study_id, study);
  if (!write.ok()) return write.status();
  return Await(*write);
}

absl::StatusOr<std::shared_ptr<PendingWrite>> RocksDbStore::EnqueueUpdateStudy(
    int64_t study_id, const cairn::v1::Study& study) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  absl::ReaderMutexLock lock(&studies_mu_);
  if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  const std::string& display_name = studies_.at(study_id);
  if (study.display_name() != display_name) {
    return absl::InvalidArgumentError(
        absl::StrCat("study.display_name of ", StudyName(study_id),
                     " cannot change: it is \"", display_name, "\", got \"",
                     study.display_name(), "\""));
  }
  cairn::v1::Study copy = study;
  copy.set_name(StudyName(study_id));
  rocksdb::WriteBatch batch;
  batch.Put(keys::StudyKey(study_id), copy.SerializeAsString());
  return Enqueue(std::move(batch), StudyName(study_id));
}

absl::Status RocksDbStore::DeleteStudy(int64_t study_id) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  absl::MutexLock lock(&studies_mu_);
  if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  rocksdb::WriteBatch batch;
  batch.Delete(keys::StudyKey(study_id));
  batch.Delete(keys::NameKey(studies_.at(study_id)));
  batch.Delete(keys::MaxTrialKey(study_id));
  const std::string trials = keys::TrialStudyPrefix(study_id);
  batch.DeleteRange(trials, keys::PrefixEnd(trials));
  const std::string measurements = keys::MeasurementStudyPrefix(study_id);
  batch.DeleteRange(measurements, keys::PrefixEnd(measurements));
  if (absl::Status st =
          Write(&batch, absl::StrCat("deletion of ", StudyName(study_id)));
      !st.ok()) {
    return st;
  }
  studies_.erase(study_id);
  {
    absl::MutexLock max_lock(&max_mu_);
    max_trial_.erase(study_id);
  }
  absl::MutexLock seq_lock(&seq_mu_);
  for (auto it = next_seq_.begin(); it != next_seq_.end();) {
    if (it->first.first == study_id) {
      next_seq_.erase(it++);
    } else {
      ++it;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredStudy>> RocksDbStore::LoadAll() {
  rocksdb::ManagedSnapshot snapshot(db_.get());
  const rocksdb::Snapshot* snap = snapshot.snapshot();
  std::vector<StoredStudy> result;
  absl::flat_hash_map<int64_t, size_t> index;

  absl::Status st = ForEachWithPrefix(
      snap, keys::kStudyPrefix,
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        StoredStudy stored;
        if (!keys::ParseStudyKey(key, &stored.study_id) ||
            !stored.study.ParseFromArray(value.data(),
                                         static_cast<int>(value.size()))) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad study record at key ", key));
        }
        index[stored.study_id] = result.size();
        result.push_back(std::move(stored));
        return absl::OkStatus();
      });
  if (!st.ok()) return st;

  st = ForEachWithPrefix(
      snap, keys::kMaxTrialPrefix,
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        int64_t study_id = 0;
        int64_t max_id = 0;
        if (!keys::ParseMaxTrialKey(key, &study_id) ||
            !absl::SimpleAtoi(value, &max_id)) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad max trial id record at key ", key));
        }
        auto it = index.find(study_id);
        if (it != index.end()) result[it->second].max_trial_id = max_id;
        return absl::OkStatus();
      });
  if (!st.ok()) return st;

  st = ForEachWithPrefix(
      snap, keys::kTrialPrefix,
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        int64_t study_id = 0;
        int64_t trial_id = 0;
        if (!keys::ParseTrialKey(key, &study_id, &trial_id)) {
          return absl::DataLossError(
              absl::StrCat("store at ", path_, ": bad trial key ", key));
        }
        auto it = index.find(study_id);
        if (it == index.end()) return absl::OkStatus();  // Orphan: skip.
        StoredStudy& stored = result[it->second];
        cairn::v1::Trial& trial = stored.trials.emplace_back();
        if (!trial.ParseFromArray(value.data(),
                                  static_cast<int>(value.size()))) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad trial record at key ", key));
        }
        stored.max_trial_id = std::max(stored.max_trial_id, trial_id);
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  return result;
}

absl::Status RocksDbStore::PutTrials(
    int64_t study_id, const std::vector<cairn::v1::Trial>& trials) {
  absl::StatusOr<std::shared_ptr<PendingWrite>> write =
      EnqueuePutTrials(study_id, trials);
  if (!write.ok()) return write.status();
  return Await(*write);
}

absl::StatusOr<std::shared_ptr<PendingWrite>> RocksDbStore::EnqueuePutTrials(
    int64_t study_id, const std::vector<cairn::v1::Trial>& trials) {
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
                 absl::StrCat("trials of ", StudyName(study_id)));
}

absl::Status RocksDbStore::DeleteTrial(int64_t study_id, int64_t trial_id) {
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
  const std::string trial_name =
      absl::StrCat(StudyName(study_id), "/trials/", trial_id);
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

uint64_t RocksDbStore::ApproximateSizeBytes() {
  // SST files plus the memtables: the data not flushed yet, which is what
  // the live WAL holds. The WAL files themselves are preallocated (see
  // wal_file_system.h), so their size says little about the data.
  uint64_t sst = 0;
  uint64_t mem = 0;
  db_->GetIntProperty("rocksdb.total-sst-files-size", &sst);
  db_->GetIntProperty("rocksdb.cur-size-all-mem-tables", &mem);
  return sst + mem;
}

}  // namespace cairn
