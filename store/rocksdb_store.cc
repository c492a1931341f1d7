// RocksDB implementation of Store, and Store::Open: opening and initialising
// the store, and the study table. The commit queue, trials and measurements
// live in rocksdb_store_{commit_queue,trials,measurements}.cc.
#include "store/rocksdb_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/sst_file_manager.h"
#include "rocksdb/write_batch.h"
#include "store/damage_check.h"
#include "store/damage_log.h"
#include "store/db_options.h"
#include "store/durable_mark.h"
#include "store/info_log.h"
#include "store/keys.h"
#include "store/rocksdb_store_util.h"
#include "store/store_lock.h"
#include "store/summary_record.h"
#include "store/wal_first_write.h"
#include "store/wal_tail.h"

namespace cairn {
namespace {

namespace keys = store_keys;
using store_internal::CheckId;
using store_internal::FreeBytes;
using store_internal::FromRocks;
using store_internal::ToSlice;
using store_internal::ToView;

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options,
                                                   const std::string& path) {
  return RocksDbStore::Open(options, path);
}

namespace {

// DataLoss for a damaged store: names the file and the damage, says that
// nothing was changed and how to repair (cairnd keeps the store in
// <data-dir>/store, so the data dir is the parent of `path`).
absl::Status DamagedStoreError(const std::string& path,
                               const std::string& damage) {
  std::string data_dir = std::filesystem::path(path).parent_path().string();
  if (data_dir.empty()) data_dir = ".";
  return absl::DataLossError(absl::StrCat(
      "store at ", path, " is damaged: ", damage,
      ". Nothing was changed and every file is left in place; run `cairnd "
      "--data-dir ",
      data_dir, " --repair` to set it aside and salvage what is intact"));
}

// Runs FindStoreDamage while holding the store's lock, so that no other
// process writes while it looks. OK when the store is intact, when there is
// no store yet, or when the lock is taken (DB::Open then reports that).
absl::Status CheckBeforeOpen(const std::string& path) {
  absl::StatusOr<std::unique_ptr<StoreLock>> lock = StoreLock::Acquire(path);
  if (!lock.ok()) return absl::OkStatus();
  absl::StatusOr<std::vector<std::string>> damage = FindStoreDamage(path);
  if (!damage.ok()) {
    if (damage.status().code() == absl::StatusCode::kDataLoss) {
      return DamagedStoreError(path, std::string(damage.status().message()));
    }
    return damage.status();
  }
  if (damage->empty()) return absl::OkStatus();
  return DamagedStoreError(path, damage->front());
}

// The store's info log, wrapped to remember the first damage RocksDB
// reports, set as `db_options`' info_log; null (RocksDB's default log) when
// there is no store to log into or the log cannot be opened. A torn WAL tail
// found by the store's Env is logged there as a warning.
std::shared_ptr<DamageLog> AttachDamageLog(
    const StoreOptions& options, const std::string& path,
    const std::optional<TornWalTail>& torn, rocksdb::Options* db_options) {
  std::shared_ptr<DamageLog> damage_log;
  if (options.create_if_missing || std::filesystem::exists(path)) {
    absl::StatusOr<std::shared_ptr<rocksdb::Logger>> info_log =
        NewInfoLog(path);
    if (info_log.ok()) {
      damage_log = std::make_shared<DamageLog>(std::move(*info_log));
      db_options->info_log = damage_log;
    }
  }
  if (torn.has_value() && damage_log != nullptr) {
    rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, damage_log.get(), "%s",
                 DescribeTornTail(*torn).c_str());
  }
  return damage_log;
}

// The Status for a failed DB::Open `s`: DataLoss naming the corrupt file
// (from `damage_log`, which may be null), Unavailable when another process
// holds the lock, NotFound when there is no store and none may be created.
// REQUIRES: !s.ok().
absl::Status OpenFailure(const StoreOptions& options, const std::string& path,
                         const rocksdb::Status& s,
                         const DamageLog* damage_log) {
  if (s.IsCorruption()) {
    const DamageReport damage =
        damage_log ? damage_log->FirstDamage() : DamageReport();
    return DamagedStoreError(
        path, damage.file.empty()
                  ? s.ToString()
                  : absl::StrCat("file ", damage.file, " is corrupt (",
                                 damage.detail, ")"));
  }
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

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> RocksDbStore::Open(
    const StoreOptions& options, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("store path must be non-empty");
  }
  if (absl::Status st = CheckBeforeOpen(path); !st.ok()) return st;
  // The first write of each WAL records the durable mark before it is
  // acknowledged (wal_first_write.h). Its sync goes through the
  // fault-injecting wrapper of tests, which must see every sync.
  auto mark_writer = std::make_shared<DurableMarkWriter>(path);
  auto wrap = [&](std::shared_ptr<rocksdb::FileSystem> base) {
    if (options.wrap_file_system) {
      base = options.wrap_file_system(std::move(base));
    }
    return NewWalFirstWriteMarkingFileSystem(std::move(base), mark_writer);
  };
  std::optional<TornWalTail> torn;
  absl::StatusOr<std::unique_ptr<rocksdb::Env>> store_env =
      NewStoreEnv(path, wrap, &torn);
  if (!store_env.ok()) return store_env.status();
  std::unique_ptr<rocksdb::Env> env = std::move(*store_env);
  rocksdb::Options db_options = StoreDbOptions(env.get());
  db_options.create_if_missing = options.create_if_missing;

  std::shared_ptr<DamageLog> damage_log =
      AttachDamageLog(options, path, torn, &db_options);

  // Disk full: RocksDB stops writes and, through the SstFileManager, polls
  // for free space every 5 s and resumes by itself once there is room for
  // a memtable flush. Without one its recovery never ends and DB::Resume
  // stays Busy. (The store's own check, kMinFreeBytesToWrite, normally
  // stops writes before RocksDB runs out of space.)
  db_options.sst_file_manager.reset(
      rocksdb::NewSstFileManager(env.get(), db_options.info_log));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, path, &raw);
  if (!s.ok()) return OpenFailure(options, path, s, damage_log.get());
  std::unique_ptr<RocksDbStore> store(new RocksDbStore(
      path, std::move(env), std::unique_ptr<rocksdb::DB>(raw), options.sync));
  if (absl::Status st = store->Init(); !st.ok()) return st;
  // Audit events are written unsynced (PutAuditEvent): the recorder syncs
  // the WAL before a mark that follows one, so they reach the disk within
  // about a second.
  RocksDbStore* raw_store = store.get();
  store->durable_mark_ = std::make_unique<DurableMarkRecorder>(
      store->db_.get(), mark_writer, [s = raw_store, sync = options.sync] {
        if (!s->writable_.load(std::memory_order_acquire) ||
            s->unsynced_write_failed_.load(std::memory_order_acquire)) {
          return WalSyncState::kFailed;
        }
        const bool unsynced =
            s->unsynced_writes_.exchange(false, std::memory_order_acq_rel);
        return sync && !unsynced ? WalSyncState::kSynced
                                 : WalSyncState::kUnsynced;
      });
  return std::unique_ptr<Store>(std::move(store));
}

RocksDbStore::RocksDbStore(std::string path, std::unique_ptr<rocksdb::Env> env,
                           std::unique_ptr<rocksdb::DB> db, bool sync)
    : path_(std::move(path)), env_(std::move(env)), db_(std::move(db)) {
  write_options_.sync = sync;
}

RocksDbStore::~RocksDbStore() {
  {
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
  durable_mark_.reset();  // Records the last writes.
}

absl::Status RocksDbStore::ForEachWithPrefix(
    const rocksdb::Snapshot* snapshot, absl::string_view prefix,
    absl::FunctionRef<absl::Status(absl::string_view key,
                                   absl::string_view value)>
        fn) const {
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
  schema_version_ = version;

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

absl::Status RocksDbStore::CheckStudyExists(int64_t study_id) const {
  if (studies_.contains(study_id)) return absl::OkStatus();
  return absl::NotFoundError(
      absl::StrCat("study ", api::StudyName(study_id), " not found"));
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
  study.set_name(api::StudyName(id));
  rocksdb::WriteBatch batch;
  batch.Put(ToSlice(keys::kNextStudyIdKey), absl::StrCat(id + 1));
  batch.Put(keys::StudyKey(id), study.SerializeAsString());
  batch.Put(name_key, absl::StrCat(id));
  // Bump the counter even if the write fails: a failed synced write may
  // still surface after recovery, and skipping an id is harmless.
  next_study_id_ = id + 1;
  if (absl::Status st = Write(&batch, api::StudyName(id)); !st.ok()) return st;
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
        absl::StrCat("study.display_name of ", api::StudyName(study_id),
                     " cannot change: it is \"", display_name, "\", got \"",
                     study.display_name(), "\""));
  }
  cairn::v1::Study copy = study;
  copy.set_name(api::StudyName(study_id));
  rocksdb::WriteBatch batch;
  batch.Put(keys::StudyKey(study_id), copy.SerializeAsString());
  return Enqueue(std::move(batch), api::StudyName(study_id));
}

absl::Status RocksDbStore::DeleteStudy(int64_t study_id) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  absl::MutexLock lock(&studies_mu_);
  if (absl::Status st = CheckStudyExists(study_id); !st.ok()) return st;
  rocksdb::WriteBatch batch;
  batch.Delete(keys::StudyKey(study_id));
  batch.Delete(keys::NameKey(studies_.at(study_id)));
  batch.Delete(keys::MaxTrialKey(study_id));
  batch.Delete(keys::SummaryKey(study_id));
  const std::string trials = keys::TrialStudyPrefix(study_id);
  batch.DeleteRange(trials, keys::PrefixEnd(trials));
  const std::string measurements = keys::MeasurementStudyPrefix(study_id);
  batch.DeleteRange(measurements, keys::PrefixEnd(measurements));
  if (absl::Status st =
          Write(&batch, absl::StrCat("deletion of ", api::StudyName(study_id)));
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

absl::StatusOr<std::vector<StoredStudy>> RocksDbStore::ReadStudies(
    const rocksdb::Snapshot* snap,
    absl::flat_hash_map<int64_t, size_t>* index) const {
  std::vector<StoredStudy> result;
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
        (*index)[stored.study_id] = result.size();
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
        auto it = index->find(study_id);
        if (it != index->end()) result[it->second].max_trial_id = max_id;
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (schema_version_ < kSummarySchemaVersion) return result;

  st = ForEachWithPrefix(
      snap, keys::kSummaryPrefix,
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        int64_t study_id = 0;
        TrialSummary summary;
        if (!keys::ParseSummaryKey(key, &study_id) ||
            !keys::DecodeSummary(value, &summary)) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad trial summary record at key ", key));
        }
        auto it = index->find(study_id);
        if (it != index->end()) result[it->second].summary = std::move(summary);
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  return result;
}

absl::Status RocksDbStore::MarkSummariesComplete() {
  if (schema_version_ >= kSummarySchemaVersion) return absl::OkStatus();
  rocksdb::WriteBatch batch;
  batch.Put(ToSlice(keys::kSchemaVersionKey),
            absl::StrCat(kSummarySchemaVersion));
  if (absl::Status st = Write(&batch, "schema version"); !st.ok()) return st;
  schema_version_ = kSummarySchemaVersion;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredStudy>> RocksDbStore::LoadStudies() {
  rocksdb::ManagedSnapshot snapshot(db_.get());
  absl::flat_hash_map<int64_t, size_t> index;
  return ReadStudies(snapshot.snapshot(), &index);
}

absl::StatusOr<std::vector<StoredStudy>> RocksDbStore::LoadAll() {
  rocksdb::ManagedSnapshot snapshot(db_.get());
  const rocksdb::Snapshot* snap = snapshot.snapshot();
  absl::flat_hash_map<int64_t, size_t> index;
  absl::StatusOr<std::vector<StoredStudy>> result = ReadStudies(snap, &index);
  if (!result.ok()) return result.status();
  absl::Status st = ForEachWithPrefix(
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
        StoredStudy& stored = (*result)[it->second];
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

absl::StatusOr<StoredStudy> RocksDbStore::LoadStudy(int64_t study_id) {
  if (absl::Status st = CheckId("study_id", study_id); !st.ok()) return st;
  rocksdb::ManagedSnapshot snapshot(db_.get());
  const rocksdb::Snapshot* snap = snapshot.snapshot();
  rocksdb::ReadOptions ro;
  ro.snapshot = snap;
  StoredStudy stored;
  stored.study_id = study_id;
  std::string value;
  const std::string study_key = keys::StudyKey(study_id);
  rocksdb::Status s = db_->Get(ro, study_key, &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        absl::StrCat("study ", api::StudyName(study_id), " not found"));
  }
  if (!s.ok()) {
    return FromRocks(
        s, absl::StrCat("reading ", study_key, " from store at ", path_));
  }
  if (!stored.study.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat(
        "store at ", path_, ": bad study record at key ", study_key));
  }
  s = db_->Get(ro, keys::MaxTrialKey(study_id), &value);
  if (s.ok() && !absl::SimpleAtoi(value, &stored.max_trial_id)) {
    return absl::DataLossError(absl::StrCat("store at ", path_,
                                            ": bad max trial id record of ",
                                            api::StudyName(study_id)));
  }
  absl::Status st = ForEachWithPrefix(
      snap, keys::TrialStudyPrefix(study_id),
      [&](absl::string_view key, absl::string_view v) -> absl::Status {
        int64_t s_id = 0;
        int64_t trial_id = 0;
        cairn::v1::Trial& trial = stored.trials.emplace_back();
        if (!keys::ParseTrialKey(key, &s_id, &trial_id) ||
            !trial.ParseFromArray(v.data(), static_cast<int>(v.size()))) {
          return absl::DataLossError(absl::StrCat(
              "store at ", path_, ": bad trial record at key ", key));
        }
        stored.max_trial_id = std::max(stored.max_trial_id, trial_id);
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (schema_version_ < kSummarySchemaVersion) return stored;
  s = db_->Get(ro, keys::SummaryKey(study_id), &value);
  if (s.ok()) {
    TrialSummary summary;
    if (!keys::DecodeSummary(value, &summary)) {
      return absl::DataLossError(absl::StrCat("store at ", path_,
                                              ": bad trial summary record of ",
                                              api::StudyName(study_id)));
    }
    stored.summary = std::move(summary);
  }
  return stored;
}

absl::StatusOr<uint64_t> RocksDbStore::AvailableBytes() {
  return FreeBytes(path_);
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
