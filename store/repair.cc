// See repair.h.
#include "store/repair.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rocksdb/db.h"
#include "store/damage_check.h"
#include "store/db_options.h"
#include "store/keys.h"
#include "store/record_check.h"
#include "store/rocksdb_store_util.h"
#include "store/store.h"
#include "store/store_lock.h"
#include "store/wal_file_system.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
namespace keys = store_keys;
using store_internal::FromRocks;
using store_internal::ToSlice;
using store_internal::ToView;

constexpr size_t kMaxLostExamples = 5;
constexpr int kRecordsPerBatch = 1000;

void NoteLost(const std::string& what, RepairReport* report) {
  if (report->lost_examples.size() < kMaxLostExamples) {
    report->lost_examples.push_back(what);
  }
}

absl::StatusOr<std::unique_ptr<rocksdb::DB>> OpenDb(
    const rocksdb::Options& options, const std::string& path, bool read_only) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = read_only
                          ? rocksdb::DB::OpenForReadOnly(options, path, &raw)
                          : rocksdb::DB::Open(options, path, &raw);
  if (!s.ok()) return FromRocks(s, absl::StrCat("opening ", path));
  return std::unique_ptr<rocksdb::DB>(raw);
}

// Study id -> display name of every study record that decodes.
std::map<int64_t, std::string> SalvageableStudies(rocksdb::DB& db) {
  std::map<int64_t, std::string> studies;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(ToSlice(keys::kStudyPrefix));
       it->Valid() && it->key().starts_with(ToSlice(keys::kStudyPrefix));
       it->Next()) {
    absl::StatusOr<RecordInfo> info =
        CheckRecord(ToView(it->key()), ToView(it->value()));
    cairn::v1::Study study;
    if (info.ok() &&
        study.ParseFromArray(it->value().data(),
                             static_cast<int>(it->value().size()))) {
      studies[info->study_id] = study.display_name();
    }
  }
  return studies;
}

// Whether a decoded record goes into the fresh store; counts it either way.
bool Keep(const RecordInfo& info, absl::string_view key,
          const std::map<int64_t, std::string>& studies, RepairReport* report) {
  switch (info.kind) {
    case RecordKind::kNameIndex:
      return false;  // Rebuilt from the studies.
    case RecordKind::kSummary:
      // Sums up trials some of which may be lost: cairnd rebuilds it from
      // the salvaged trials when it first opens the fresh store.
      return false;
    case RecordKind::kMeta:
    case RecordKind::kOther:
      ++report->recovered.other;
      return true;
    default:
      break;
  }
  if (!studies.count(info.study_id)) {
    ++report->orphaned;
    NoteLost(absl::StrCat(key, " (its study is lost)"), report);
    return false;
  }
  if (info.kind == RecordKind::kStudy) ++report->recovered.studies;
  if (info.kind == RecordKind::kTrial) ++report->recovered.trials;
  if (info.kind == RecordKind::kMeasurement) ++report->recovered.measurements;
  if (info.kind == RecordKind::kMaxTrialId) ++report->recovered.other;
  return true;
}

// Copies every record of `from` worth keeping into `to`.
absl::Status CopyRecords(rocksdb::DB& from, rocksdb::DB& to,
                         RepairReport* report) {
  const std::map<int64_t, std::string> studies = SalvageableStudies(from);
  std::unique_ptr<rocksdb::Iterator> it(
      from.NewIterator(rocksdb::ReadOptions()));
  rocksdb::WriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::StatusOr<RecordInfo> info =
        CheckRecord(ToView(it->key()), ToView(it->value()));
    if (!info.ok()) {
      ++report->unreadable;
      NoteLost(std::string(info.status().message()), report);
    } else if (Keep(*info, ToView(it->key()), studies, report)) {
      batch.Put(it->key(), it->value());
    }
    if (batch.Count() >= kRecordsPerBatch) {
      if (rocksdb::Status s = to.Write(rocksdb::WriteOptions(), &batch);
          !s.ok()) {
        return FromRocks(s, "writing the fresh store");
      }
      batch.Clear();
    }
  }
  if (!it->status().ok()) {
    ++report->unreadable;
    NoteLost(absl::StrCat("reading stopped: ", it->status().ToString()),
             report);
  }
  for (const auto& [id, name] : studies) {
    batch.Put(keys::NameKey(name), absl::StrCat(id));
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(to.Write(sync, &batch), "writing the fresh store");
}

// Builds the fresh store at `fresh` from the repaired copy at `work`.
absl::Status Salvage(const std::string& work, const std::string& fresh,
                     RepairReport* report) {
  std::unique_ptr<rocksdb::Env> env = NewStableSizeWalEnv();
  rocksdb::Options options = StoreDbOptions(env.get());
  options.info_log = NewDiscardingLogger();
  absl::StatusOr<std::unique_ptr<rocksdb::DB>> from =
      OpenDb(options, work, /*read_only=*/true);
  if (!from.ok()) return from.status();
  rocksdb::Options fresh_options = StoreDbOptions(env.get());
  fresh_options.create_if_missing = true;
  fresh_options.error_if_exists = true;
  absl::StatusOr<std::unique_ptr<rocksdb::DB>> to =
      OpenDb(fresh_options, fresh, /*read_only=*/false);
  if (!to.ok()) return to.status();
  absl::Status s = CopyRecords(**from, **to, report);
  if (s.ok()) s = FromRocks((*to)->Close(), "closing the fresh store");
  if (!s.ok()) return s;
  // The fresh store must open as a Store (schema version, study table).
  return Store::Open(StoreOptions(), fresh).status();
}

absl::Status SyncDir(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open ", dir));
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok ? absl::OkStatus()
            : absl::InternalError(absl::StrCat("cannot sync ", dir));
}

// Copies `path` to `work` and runs RepairDB on the copy.
absl::Status RepairCopy(const std::string& path, const std::string& work) {
  std::error_code ec;
  fs::copy(path, work, fs::copy_options::recursive, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot copy ", path, " to ", work, ": ", ec.message()));
  }
  std::unique_ptr<rocksdb::Env> env = NewStableSizeWalEnv();
  rocksdb::Options options = StoreDbOptions(env.get());
  return FromRocks(rocksdb::RepairDB(work, options),
                   absl::StrCat("rocksdb::RepairDB on ", work));
}

// Renames `path` to `aside` and `fresh` to `path`.
absl::Status SwapIn(const std::string& path, const std::string& aside,
                    const std::string& fresh) {
  std::error_code ec;
  fs::rename(path, aside, ec);
  if (!ec) fs::rename(fresh, path, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot move ", path, " aside: ", ec.message()));
  }
  std::string parent = fs::path(path).parent_path().string();
  return SyncDir(parent.empty() ? "." : parent);
}

}  // namespace

absl::StatusOr<RepairReport> RepairStore(const std::string& path,
                                         absl::Time now) {
  absl::StatusOr<std::unique_ptr<StoreLock>> lock = StoreLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  RepairReport report;
  absl::StatusOr<std::vector<std::string>> damage = FindStoreDamage(path);
  if (damage.ok()) {
    report.damage = *damage;
  } else {
    report.damage.push_back(std::string(damage.status().message()));
  }
  report.aside_path =
      absl::StrCat(path, ".damaged-",
                   absl::FormatTime("%Y%m%d-%H%M%S", now, absl::UTCTimeZone()));
  const std::string work = report.aside_path + ".work";
  const std::string fresh = report.aside_path + ".repaired";
  for (const std::string& p : {report.aside_path, work, fresh}) {
    if (fs::exists(p)) {
      return absl::FailedPreconditionError(
          absl::StrCat(p, " exists already; move it away first"));
    }
  }
  absl::Status s = RepairCopy(path, work);
  if (s.ok()) s = Salvage(work, fresh, &report);
  if (s.ok()) s = SwapIn(path, report.aside_path, fresh);
  lock->reset();
  std::error_code ec;
  fs::remove_all(work, ec);
  if (!s.ok()) {
    fs::remove_all(fresh, ec);
    return s;
  }
  return report;
}

std::string FormatRepairReport(const std::string& path,
                               const RepairReport& report) {
  std::string out = absl::StrCat("repair ", path, ": ");
  if (report.damage.empty()) {
    absl::StrAppend(&out, "no damage found\n");
  } else {
    absl::StrAppend(&out, "damage found:\n");
    for (const std::string& d : report.damage) {
      absl::StrAppend(&out, "  ", d, "\n");
    }
  }
  const bool intact = report.damage.empty();
  absl::StrAppend(&out, "moved the ", intact ? "original" : "damaged",
                  " store aside to ", report.aside_path,
                  " (every file kept)\n");
  absl::StrAppend(&out, "recovered ", report.recovered.studies, " studies, ",
                  report.recovered.trials, " trials, ",
                  report.recovered.measurements,
                  " measurements into a fresh store at ", path, "\n");
  const int64_t lost = report.unreadable + report.orphaned;
  if (lost == 0 && intact) {
    absl::StrAppend(&out, "nothing lost: every record decoded\n");
    return out;
  }
  if (lost == 0) {
    absl::StrAppend(&out,
                    "could not recover: only what the damaged files held "
                    "beyond that (see the damage above); every salvaged "
                    "record decoded\n");
    return out;
  }
  absl::StrAppend(&out, "could not recover ", lost, " records (",
                  report.unreadable, " unreadable, ", report.orphaned,
                  " whose study is lost); first: ",
                  absl::StrJoin(report.lost_examples, "; "), "\n");
  return out;
}

}  // namespace cairn
