// RocksDbStore's audit log (a/<id>): one write per event through the commit
// queue (carrying the retention range deletion when asked), read with a
// bounded iterator.
#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/rocksdb_store_util.h"

namespace cairn {

namespace keys = store_keys;
using store_internal::CheckId;
using store_internal::FromRocks;
using store_internal::ToSlice;
using store_internal::ToView;

absl::Status RocksDbStore::PutAuditEvent(int64_t id,
                                         const cairn::v1::AuditEvent& event,
                                         int64_t delete_before) {
  if (absl::Status s = CheckId("audit event id", id); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  if (delete_before > 0) {
    batch.DeleteRange(ToSlice(keys::kAuditPrefix),
                      keys::AuditKey(delete_before));
  }
  batch.Put(keys::AuditKey(id), event.SerializeAsString());
  // Unsynced, outside the commit queue: in the WAL (so it survives a crash
  // of cairnd) when this returns; the next synced write or the durable-mark
  // recorder's SyncWAL (within about a second) puts it on disk.
  if (absl::Status s = WriteHealth(); !s.ok()) return s;
  if (rocksdb::Status s = CheckRoomToWrite(); !s.ok()) {
    return FromRocks(s, absl::StrCat("writing audit event ", id));
  }
  rocksdb::WriteOptions unsynced = write_options_;
  unsynced.sync = false;
  rocksdb::Status s = db_->Write(unsynced, &batch);
  if (s.ok()) {
    unsynced_writes_.store(true, std::memory_order_release);
  } else {
    unsynced_write_failed_.store(true, std::memory_order_release);
  }
  return FromRocks(
      s, absl::StrCat("writing audit event ", id, " in store at ", path_));
}

absl::Status RocksDbStore::DeleteAuditEventsBefore(int64_t before) {
  if (absl::Status s = CheckId("audit event id", before); !s.ok()) return s;
  rocksdb::WriteBatch batch;
  batch.DeleteRange(ToSlice(keys::kAuditPrefix), keys::AuditKey(before));
  return Write(&batch, absl::StrCat("audit events before ", before));
}

absl::Status RocksDbStore::ScanAuditEvents(int64_t start_id,
                                           const AuditVisitor& visit) {
  const std::string end = keys::PrefixEnd(keys::kAuditPrefix);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(keys::AuditKey(std::max<int64_t>(start_id, 0))); it->Valid();
       it->Next()) {
    int64_t id = 0;
    cairn::v1::AuditEvent event;
    if (!keys::ParseAuditKey(ToView(it->key()), &id) ||
        !event.ParseFromArray(it->value().data(),
                              static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat(
          "store at ", path_, ": key \"", absl::CHexEscape(ToView(it->key())),
          "\": not an AuditEvent"));
    }
    if (!visit(id, event)) return absl::OkStatus();
  }
  return FromRocks(it->status(),
                   absl::StrCat("scanning the audit log in store at ", path_));
}

absl::StatusOr<int64_t> RocksDbStore::LastAuditEventId() {
  const std::string end = keys::PrefixEnd(keys::kAuditPrefix);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(end);
  if (!it->status().ok()) {
    return FromRocks(it->status(),
                     absl::StrCat("reading the audit log in store at ", path_));
  }
  int64_t id = 0;
  if (!it->Valid() || !keys::ParseAuditKey(ToView(it->key()), &id)) return 0;
  return id;
}

}  // namespace cairn
