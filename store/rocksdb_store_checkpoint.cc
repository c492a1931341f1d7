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
// checkpoint, so the copy is the table files (hard links, nearly free) plus
// the little WAL written since the flush, which is copied; the live store
// gets one small L0 table file per backup. Acknowledged writes are in the
// copy either way: flushed into the tables, or in the copied (fsynced) WAL.
// Not flushing would copy the whole live WAL instead, whose files are
// preallocated (store/wal_file_system.h), so the copy could cost tens of MB
// however little data they hold.
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
