// See verify.h.
#include "store/verify.h"

#include <filesystem>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "store/damage_check.h"
#include "store/db_options.h"
#include "store/record_check.h"
#include "store/rocksdb_store_util.h"
#include "store/store_lock.h"
#include "store/wal_tail.h"

namespace cairn {
namespace {

using store_internal::ToView;

// Problems listed in full; the rest are counted.
constexpr size_t kMaxListedProblems = 20;

void AddProblem(std::string problem, VerifyReport* report) {
  report->problems.push_back(std::move(problem));
}

int64_t CountDataFiles(const std::string& path) {
  int64_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    if (absl::EndsWith(name, ".sst") || absl::EndsWith(name, ".log") ||
        absl::StartsWith(name, "MANIFEST-")) {
      ++n;
    }
  }
  return n;
}

void Count(RecordKind kind, RecordCounts* counts) {
  switch (kind) {
    case RecordKind::kStudy:
      ++counts->studies;
      break;
    case RecordKind::kTrial:
      ++counts->trials;
      break;
    case RecordKind::kMeasurement:
      ++counts->measurements;
      break;
    default:
      ++counts->other;
  }
}

// Decodes every record of `db`.
void CheckRecords(rocksdb::DB& db, VerifyReport* report) {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::StatusOr<RecordInfo> info =
        CheckRecord(ToView(it->key()), ToView(it->value()));
    if (info.ok()) {
      Count(info->kind, &report->records);
    } else {
      AddProblem(std::string(info.status().message()), report);
    }
  }
  if (!it->status().ok()) {
    AddProblem(absl::StrCat("reading the records: ", it->status().ToString()),
               report);
  }
}

}  // namespace

absl::StatusOr<VerifyReport> VerifyStore(const std::string& path) {
  absl::StatusOr<std::unique_ptr<StoreLock>> lock = StoreLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  VerifyReport report;
  report.files_checked = CountDataFiles(path);
  absl::StatusOr<std::vector<std::string>> damage = FindStoreDamage(path);
  if (!damage.ok()) return damage.status();
  report.problems = *damage;

  std::optional<TornWalTail> torn;
  absl::StatusOr<std::unique_ptr<rocksdb::Env>> env =
      NewStoreEnv(path, nullptr, &torn);
  if (!env.ok()) return env.status();
  if (torn.has_value()) report.notes.push_back(DescribeTornTail(*torn));
  rocksdb::Options options = StoreDbOptions(env->get());
  options.info_log = NewDiscardingLogger();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, path, &raw);
  if (!s.ok()) return report;  // FindStoreDamage named the reason.
  std::unique_ptr<rocksdb::DB> db(raw);
  if (s = db->VerifyChecksum(); !s.ok()) {
    AddProblem(absl::StrCat("SST checksums: ", s.ToString()), &report);
  }
  CheckRecords(*db, &report);
  return report;
}

std::string FormatVerifyReport(const std::string& path,
                               const VerifyReport& report) {
  std::string out = absl::StrCat(
      "verify ", path, ": ", report.files_checked, " files checked; ",
      report.records.studies, " studies, ", report.records.trials, " trials, ",
      report.records.measurements, " measurements\n");
  for (const std::string& note : report.notes) {
    absl::StrAppend(&out, "note: ", note, "\n");
  }
  if (report.problems.empty()) {
    absl::StrAppend(&out, "store is intact\n");
    return out;
  }
  absl::StrAppend(&out, "store is damaged: ", report.problems.size(),
                  " problem(s)\n");
  for (size_t i = 0; i < report.problems.size() && i < kMaxListedProblems;
       ++i) {
    absl::StrAppend(&out, "  ", report.problems[i], "\n");
  }
  if (report.problems.size() > kMaxListedProblems) {
    absl::StrAppend(&out, "  ... and ",
                    report.problems.size() - kMaxListedProblems, " more\n");
  }
  return out;
}

}  // namespace cairn
