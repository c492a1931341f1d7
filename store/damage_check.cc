// See damage_check.h.
#include "store/damage_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "rocksdb/metadata.h"
#include "rocksdb/transaction_log.h"
#include "store/damage_log.h"
#include "store/db_options.h"
#include "store/durable_mark.h"
#include "store/manifest_state.h"
#include "store/rocksdb_store_util.h"
#include "store/wal_tail.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using store_internal::FromRocks;

// What a read-only open learned about the store.
struct Recovered {
  std::set<std::string> live_ssts;  // Base names the MANIFEST references.
  // The highest file number the MANIFEST records (a referenced SST's or its
  // log number): every file numbered below was created before its last edit.
  uint64_t recorded_file_number = 0;
  uint64_t first_wal_seqno = UINT64_MAX;  // First write in the WALs on disk.
  uint64_t first_wal_number = 0;          // The WAL that holds it.
  uint64_t last_seqno = 0;                // After replaying the WALs.
  uint64_t manifest_seqno = 0;            // ManifestState::last_seqno.
};

Recovered Inspect(rocksdb::DB& db) {
  Recovered r;
  std::vector<rocksdb::LiveFileMetaData> live;
  db.GetLiveFilesMetaData(&live);
  for (const rocksdb::LiveFileMetaData& f : live) {
    r.live_ssts.insert(fs::path(f.name).filename().string());
    r.recorded_file_number = std::max(r.recorded_file_number, f.file_number);
  }
  // WALs below the MANIFEST's log number are not replayed (a crash may
  // leave them behind); only the others hold data for the store.
  uint64_t min_wal = 0;
  db.GetIntProperty("rocksdb.min-log-number-to-keep", &min_wal);
  r.recorded_file_number = std::max(r.recorded_file_number, min_wal);
  rocksdb::VectorLogPtr wals;
  if (db.GetSortedWalFiles(wals).ok()) {
    for (const auto& wal : wals) {
      if (wal->LogNumber() >= min_wal && wal->SizeFileBytes() > 0 &&
          wal->StartSequence() > 0 &&
          wal->StartSequence() < r.first_wal_seqno) {
        r.first_wal_seqno = wal->StartSequence();
        r.first_wal_number = wal->LogNumber();
      }
    }
  }
  r.last_seqno = db.GetLatestSequenceNumber();
  return r;
}

std::string WalName(uint64_t number) {
  char name[32];
  std::snprintf(name, sizeof(name), "%06llu.log",
                static_cast<unsigned long long>(number));
  return name;
}

// What the SST `sst`, which the MANIFEST does not reference, holds that no
// other file holds, given its sequence range; empty if nothing (see
// FindStoreDamage).
absl::StatusOr<std::string> OrphanSstLoss(
    const fs::path& sst, const std::optional<SeqnoRange>& range,
    const Recovered& r, rocksdb::DB& manifest_db) {
  if (!range.has_value()) return "writes of unknown sequence numbers";
  if (range->smallest > 0) {
    const bool in_ssts = range->largest <= r.manifest_seqno;
    const bool in_wals =
        range->smallest >= r.first_wal_seqno && range->largest <= r.last_seqno;
    if (in_ssts || in_wals) return "";
    return absl::StrCat("writes ", range->smallest, "..", range->largest);
  }
  // Sequence numbers zeroed by a compaction to the bottom level say nothing
  // of the writes' age.
  uint64_t number = 0;
  if (absl::SimpleAtoi(sst.stem().string(), &number) &&
      number < r.recorded_file_number) {
    return "";
  }
  absl::StatusOr<std::optional<std::string>> missing =
      FindEntryNotHeld(sst.string(), manifest_db);
  if (!missing.ok()) return missing.status();
  if (!missing->has_value()) return "";
  return absl::StrCat("writes (", absl::CHexEscape(**missing), " among them)");
}

// The MANIFEST that CURRENT names, or "the MANIFEST".
std::string CurrentManifest(const std::string& path) {
  std::ifstream in(fs::path(path) / "CURRENT");
  std::string name;
  if (!std::getline(in, name) || name.empty()) return "the MANIFEST";
  return absl::StrCat("file ", name);
}

// The orphan SSTs (see FindStoreDamage) that hold data nothing else holds.
absl::Status CheckOrphanSsts(const std::string& path, const Recovered& r,
                             rocksdb::DB& manifest_db,
                             std::vector<std::string>* problems) {
  for (const auto& e : fs::directory_iterator(path)) {
    const std::string name = e.path().filename().string();
    if (!absl::EndsWith(name, ".sst") || r.live_ssts.count(name) > 0) continue;
    const absl::StatusOr<std::optional<SeqnoRange>> range =
        ReadSstSeqnoRange(e.path().string());
    // A MANIFEST references an SST only once it is complete and synced, so
    // one cut short is the leftover of an interrupted flush or compaction.
    if (!range.ok()) continue;
    absl::StatusOr<std::string> loss =
        OrphanSstLoss(e.path(), *range, r, manifest_db);
    if (!loss.ok()) return loss.status();
    if (loss->empty()) continue;
    problems->push_back(absl::StrCat(
        CurrentManifest(path), " does not reference ", name, ", which holds ",
        *loss, " that no other file holds (the MANIFEST is damaged or old)"));
  }
  return absl::OkStatus();
}

// Writes between those the MANIFEST's SSTs hold and the first the WALs it
// keeps hold (see FindStoreDamage).
void CheckManifestGap(const std::string& path, const Recovered& r,
                      std::vector<std::string>* problems) {
  if (r.first_wal_seqno == UINT64_MAX ||
      r.first_wal_seqno <= r.manifest_seqno + 1) {
    return;
  }
  problems->push_back(absl::StrCat(
      CurrentManifest(path), " is damaged or old: its SSTs hold writes up to ",
      r.manifest_seqno, " and the WALs (from ", WalName(r.first_wal_number),
      ") writes from ", r.first_wal_seqno, " on; writes ", r.manifest_seqno + 1,
      "..", r.first_wal_seqno - 1, " are in neither"));
}

// Durable writes that the WALs no longer hold.
void CheckDurableMark(const std::string& path, const Recovered& r,
                      const DurableMark& mark,
                      std::vector<std::string>* problems) {
  if (mark.sequence <= r.last_seqno) return;
  const std::string wal = WalName(mark.wal_number);
  std::error_code ec;
  const uintmax_t size = fs::file_size(fs::path(path) / wal, ec);
  const char* kind = ec ? "is missing" : size == 0 ? "is empty" : "ends early";
  problems->push_back(absl::StrCat(
      "file ", wal, " ", kind, ": writes up to ", mark.sequence,
      " were durable, the WALs on disk hold writes only up to ", r.last_seqno));
}

// The newest WAL ending in the middle of a record (`cut`), when the mark
// says that its file was preallocated and that cairnd did not close it
// (see wal_tail.h; a cut WAL of a closed store loses writes the closing
// mark names).
void CheckCutWal(const std::optional<CutWal>& cut, const DurableMark& mark,
                 std::vector<std::string>* problems) {
  if (!mark.wal_preallocated || mark.closed || !cut.has_value() ||
      cut->file != WalName(mark.wal_number)) {
    return;
  }
  problems->push_back(absl::StrCat(
      "file ", cut->file, " is cut short: it ends at byte ", cut->size,
      " in the middle of the record at byte ", cut->cut_at,
      ", where a preallocated WAL never ends; the writes from there on are "
      "lost"));
}

// The checks that need the durable mark (a garbled mark is damage too).
void CheckWalsAgainstMark(const std::string& path, const Recovered& r,
                          const std::optional<CutWal>& cut,
                          std::vector<std::string>* problems) {
  absl::StatusOr<std::optional<DurableMark>> mark = ReadDurableMark(path);
  if (!mark.ok()) {
    problems->push_back(std::string(mark.status().message()));
    return;
  }
  if (!mark->has_value()) return;
  CheckDurableMark(path, r, **mark, problems);
  CheckCutWal(cut, **mark, problems);
}

// "file 000008.sst is missing" when a failed open says that an SST the
// MANIFEST names is gone (RocksDB looks for NNNNNN.sst, then NNNNNN.ldb, and
// reports the second); empty otherwise.
std::string MissingSst(const std::string& status) {
  const size_t at = status.find(".ldb: No such file");
  if (at == std::string::npos || at < 6) return "";
  return absl::StrCat("file ", status.substr(at - 6, 6), ".sst is missing (",
                      status, ")");
}

// "file MANIFEST-000012, which CURRENT names, is missing" when a failed
// open says so; empty otherwise.
std::string MissingManifest(const std::string& status) {
  const size_t at = status.find("/MANIFEST-");
  if (at == std::string::npos ||
      status.find("No such file") == std::string::npos) {
    return "";
  }
  const size_t end = status.find_first_of(": ", at + 1);
  return absl::StrCat("file ", status.substr(at + 1, end - at - 1),
                      ", which CURRENT names, is missing (", status, ")");
}

std::string DescribeCorruption(const DamageReport& damage,
                               const rocksdb::Status& s) {
  if (const std::string missing = MissingSst(s.ToString()); !missing.empty()) {
    return missing;
  }
  if (std::string missing = MissingManifest(s.ToString()); !missing.empty()) {
    return missing;
  }
  if (damage.file.empty()) {
    // RocksDB names the file it failed on at the end: "... in file DIR/F".
    const std::string status = s.ToString();
    const size_t at = status.rfind(" in file ");
    if (at == std::string::npos) return status;
    return absl::StrCat("file ",
                        fs::path(status.substr(at + 9)).filename().string(),
                        " is corrupt (", status.substr(0, at), ")");
  }
  return absl::StrCat("file ", damage.file, " is corrupt (", damage.detail,
                      ")");
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FindStoreDamage(
    const std::string& path) {
  std::optional<CutWal> cut;
  absl::StatusOr<std::unique_ptr<rocksdb::Env>> env =
      NewStoreEnv(path, nullptr, nullptr, &cut);
  if (!env.ok()) return env.status();
  rocksdb::Options options = StoreDbOptions(env->get());
  auto damage_log = std::make_shared<DamageLog>(NewDiscardingLogger());
  options.info_log = damage_log;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, path, &raw);
  std::vector<std::string> problems;
  // A file the MANIFEST names that is gone or unreadable is damage too;
  // RocksDB reports it as an IOError.
  if (s.IsCorruption() || s.IsIOError()) {
    problems.push_back(DescribeCorruption(damage_log->FirstDamage(), s));
    return problems;
  }
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("opening store at ", path, " read-only"));
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  Recovered recovered = Inspect(*db);
  db.reset();
  absl::StatusOr<ManifestState> manifest = OpenManifestState(path);
  if (!manifest.ok()) return manifest.status();
  recovered.manifest_seqno = manifest->last_seqno;
  absl::Status checked =
      CheckOrphanSsts(path, recovered, *manifest->db, &problems);
  if (!checked.ok()) return checked;
  CheckManifestGap(path, recovered, &problems);
  CheckWalsAgainstMark(path, recovered, cut, &problems);
  return problems;
}

}  // namespace cairn
