// The RocksDB options every opener of a store uses (the store itself, the
// damage check, verify and repair), and the sequence-number range each SST
// written with them records, which the damage check uses to tell a stray
// SST left by an interrupted flush from one a damaged MANIFEST lost.
#ifndef CAIRN_STORE_DB_OPTIONS_H_
#define CAIRN_STORE_DB_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"

namespace cairn {

// Options for a store over `env` (which must outlive every DB opened with
// them): tolerant WAL tail recovery, WALs tracked in the MANIFEST, paranoid
// checks, and the SST sequence-range collector below. create_if_missing is
// false and info_log unset; callers set what they need.
rocksdb::Options StoreDbOptions(rocksdb::Env* env);

// Smallest and largest sequence number of the entries of one SST.
struct SeqnoRange {
  uint64_t smallest = 0;
  uint64_t largest = 0;
};

// The range recorded in the SST file at `sst_path` by StoreDbOptions'
// collector; nullopt if the table was written without the collector (an
// older cairnd, or an SST with no entries). DataLoss if the file does not
// open as a table (cut short: a flush or compaction was interrupted while
// writing it; or corrupt).
absl::StatusOr<std::optional<SeqnoRange>> ReadSstSeqnoRange(
    const std::string& sst_path);

// A logger that drops everything: for opens that must not write to the
// store directory (read-only checks).
std::shared_ptr<rocksdb::Logger> NewDiscardingLogger();

}  // namespace cairn

#endif  // CAIRN_STORE_DB_OPTIONS_H_
