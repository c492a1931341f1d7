// The record a crash tore at the end of the newest write-ahead log, and a
// newest write-ahead log cut short.
//
// cairnd's WAL files keep their preallocated size while they are written
// (wal_file_system.h), so a process killed while appending a record leaves
// the record's first bytes followed by the preallocated zeros, where a file
// that grows with each append would simply end. RocksDB ignores a record
// cut short by the end of the file (a crash tail) but reports one cut short
// by zeros as corruption ("error in middle of record", "checksum
// mismatch"), so a plain kill -9 could look like damage. FindTornWalTail
// tells such a tail apart from damage, and NewStoreEnv shows RocksDB the
// WAL as it would be without preallocation: ending where the torn record
// starts. No file is changed.
//
// A torn tail: the newest WAL's records are intact up to offset `torn_at`;
// from there it holds the beginning of one record (its first fragments
// intact, then a fragment or header that runs into zeros) and then only
// zeros to its end, with no intact record among those bytes. Such a record
// was never acknowledged: a write is acknowledged only after its whole
// record is in the file, and records are appended one after the other.
// Anything else that does not parse (a record that fails its checksum
// while intact bytes follow it, a missing fragment before an intact record)
// is left for RocksDB to report as damage.
//
// Cut short: a WAL that ends in the middle of a record, the record running
// past the end of the file (or the file ending between a record's
// fragments). A crash leaves no such WAL when the file was preallocated:
// the zeros of the preallocation follow whatever the writer got out. So a
// preallocated WAL that ends so, in a store that cairnd did not close, lost
// its end after the fact (truncated), and the writes in it from that record
// on are gone; the damage check reports it (store/damage_check.h). A WAL
// that was not preallocated (a file system without fallocate) may end so
// after a crash, and one that RocksDB closed (truncating it to what it
// wrote) after a failed append; RocksDB then drops the record, as it would
// a torn one.
//
// Limitation: an acknowledged last record whose end a disk fault turned
// into zeros looks the same as a torn one. When its write was older than
// the durable mark (store/durable_mark.h) the damage check still reports
// the loss.
#ifndef CAIRN_STORE_WAL_TAIL_H_
#define CAIRN_STORE_WAL_TAIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace cairn {

struct TornWalTail {
  std::string file;      // File name in the store directory: "000014.log".
  uint64_t torn_at = 0;  // Length of the WAL's intact part.
  uint64_t hidden = 0;   // Non-zero bytes after it (the torn record's).
};

// Where a torn record starts in the WAL `bytes` (RocksDB 7.8's log format,
// legacy record types), or nullopt when the WAL ends cleanly (in complete
// records, then only zeros) or is damaged in another way.
std::optional<uint64_t> FindTornRecord(std::string_view bytes);

// Where a record cut short by the end of the file (see above) starts in the
// WAL `bytes`, or nullopt when it ends otherwise.
std::optional<uint64_t> FindCutRecord(std::string_view bytes);

struct CutWal {
  std::string file;     // File name in the store directory: "000014.log".
  uint64_t cut_at = 0;  // Where the record cut short starts.
  uint64_t size = 0;    // The file's size.
};

// How the newest WAL (the highest number) of a store ends: torn by a crash,
// cut short, or neither (both empty; also when there is no WAL).
struct NewestWalEnd {
  std::optional<TornWalTail> torn;
  std::optional<CutWal> cut;
};

// Reads the newest WAL of the store at `dir`. Reads only.
absl::StatusOr<NewestWalEnd> InspectNewestWal(const std::string& dir);

// InspectNewestWal(dir).torn.
absl::StatusOr<std::optional<TornWalTail>> FindTornWalTail(
    const std::string& dir);

// NewStableSizeWalEnv(wrap) for the store at `dir`, showing the newest WAL
// without its torn tail when it has one (then described in `*torn` when
// `torn` is not null). A newest WAL cut short is shown as it is (RocksDB
// drops its last record) and described in `*cut` when `cut` is not null.
// The Env must outlive every DB opened with it.
absl::StatusOr<std::unique_ptr<rocksdb::Env>> NewStoreEnv(
    const std::string& dir,
    const std::function<std::shared_ptr<rocksdb::FileSystem>(
        std::shared_ptr<rocksdb::FileSystem>)>& wrap = nullptr,
    std::optional<TornWalTail>* torn = nullptr,
    std::optional<CutWal>* cut = nullptr);

// One line for logs and reports: "000014.log ends in a record torn by a
// crash (N bytes at offset M, never acknowledged); it is ignored".
std::string DescribeTornTail(const TornWalTail& tail);

}  // namespace cairn

#endif  // CAIRN_STORE_WAL_TAIL_H_
