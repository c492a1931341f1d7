// Repairing a damaged store: the damaged directory is set aside whole and a
// fresh store is built at the same path from what can be salvaged.
#ifndef CAIRN_STORE_REPAIR_H_
#define CAIRN_STORE_REPAIR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/verify.h"

namespace cairn {

struct RepairReport {
  std::vector<std::string> damage;  // What FindStoreDamage found first.
  std::string aside_path;           // Where the damaged store now is.
  RecordCounts recovered;           // Records written to the fresh store.
  int64_t unreadable = 0;           // Records that did not decode.
  int64_t orphaned = 0;             // Trials/measurements whose study was lost.
  std::vector<std::string> lost_examples;  // The first few lost keys.
};

// Repairs the store at `path` (run with no cairnd using it):
//  1. copies `path` to <aside>.work and runs rocksdb::RepairDB on the copy
//     (it rebuilds the MANIFEST from every SST and replays every readable
//     WAL record), where <aside> is <path>.damaged-YYYYMMDD-HHMMSS (`now`,
//     UTC);
//  2. reads the copy record by record, keeps each that decodes (see
//     record_check.h) and whose study survived, rebuilds the name index, and
//     writes them into a fresh store at <aside>.repaired, which must then
//     open as a Store;
//  3. renames `path` to <aside> (never deleted: every byte is kept) and the
//     fresh store to `path`, then removes the work copy.
// Works on an intact store too, losslessly. Errors: Unavailable if the store
// is locked, NotFound if `path` holds no database, FailedPrecondition if
// <aside> exists; on any error before step 3 `path` is unchanged.
absl::StatusOr<RepairReport> RepairStore(const std::string& path,
                                         absl::Time now);

// The report as cairnd --repair prints it (several lines, ending in "\n").
std::string FormatRepairReport(const std::string& path,
                               const RepairReport& report);

}  // namespace cairn

#endif  // CAIRN_STORE_REPAIR_H_
