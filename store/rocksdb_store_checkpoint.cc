// RocksDbStore::Checkpoint: a consistent copy of the live store (RocksDB's
// Checkpoint), the building block of online backup (store/backup.h).
#include <memory>

#include "absl/strings/str_cat.h"
#include "rocksdb/utilities/checkpoint.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"

namespace cairn {
namespace {

// log_size_for_flush: 0 makes RocksDB flush the memtables before every
// checkpoint, so the acknowledged data is in table files (hard links, nearly
// free) and the copied WAL holds only what was written since the flush; the
// live store gets one small L0 table file per backup. Acknowledged writes are
// in the copy either way: flushed into the tables, or in the copied (fsynced)
// WAL. Not flushing would copy every live WAL instead. Either way the current
// WAL is copied at its size on disk, which is its preallocated size
// (store/wal_file_system.h: about 1.1 x the memtable size, mostly zeros);
// BackupStore's first open of the copy replays it and drops it.
constexpr uint64_t kFlushWalBytes = 0;

}  // namespace

absl::StatusOr<uint64_t> RocksDbStore::Checkpoint(const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(db_.get(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  uint64_t sequence = 0;
  if (s.ok()) s = checkpoint->CreateCheckpoint(dir, kFlushWalBytes, &sequence);
  if (!s.ok()) {
    return store_internal::FromRocks(
        s, absl::StrCat("checkpoint of store at ", path_, " into ", dir));
  }
  return sequence;
}

}  // namespace cairn
