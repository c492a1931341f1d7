// The store as its MANIFEST alone describes it: the SSTs the MANIFEST
// references, opened read-only with the write-ahead logs reading as empty so
// that no WAL is replayed. The damage check (damage_check.h) compares this
// with the files on disk to find writes that a damaged or old MANIFEST lost.
#ifndef CAIRN_STORE_MANIFEST_STATE_H_
#define CAIRN_STORE_MANIFEST_STATE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"

namespace cairn {

struct ManifestState {
  std::unique_ptr<rocksdb::Env> env;  // Outlives `db` (declared first).
  std::unique_ptr<rocksdb::DB> db;    // Read-only; no WAL replayed.
  // The MANIFEST's last sequence number. RocksDB 7.8 sets it at each edit
  // to the largest sequence number of any SST added so far (a flush's
  // newest write), so a compaction that zeroes sequence numbers never
  // lowers it: the referenced SSTs hold every write up to it, and every
  // later write is in a WAL the MANIFEST keeps (from its log number on),
  // except in a store whose MANIFEST is damaged or old.
  uint64_t last_seqno = 0;
};

// Opens the store at `path` that way. Writes nothing. Errors: those of
// RocksDB's read-only open (a corrupt MANIFEST, a missing SST).
absl::StatusOr<ManifestState> OpenManifestState(const std::string& path);

// The first entry of the SST at `sst_path` (a key and its value) that `db`
// holds in no version, as "key <key>"; nullopt if `db` holds every entry.
// The entries of a compaction's output are entries of its inputs with their
// sequence numbers zeroed or kept, so the output of a compaction a crash
// interrupted is held whole by the SSTs its inputs are in. Errors: the SST
// does not open as a table, or reading fails.
absl::StatusOr<std::optional<std::string>> FindEntryNotHeld(
    const std::string& sst_path, rocksdb::DB& db);

}  // namespace cairn

#endif  // CAIRN_STORE_MANIFEST_STATE_H_
