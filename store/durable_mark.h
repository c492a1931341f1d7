// The durable mark: a small file (CAIRN-DURABLE) in the store directory that
// records a RocksDB sequence number known to be durable and the WAL that was
// current then (the WAL that holds it, or a newer one). RocksDB 7.8 does not
// track the live WAL in its MANIFEST, so an emptied or deleted newest WAL opens
// silently with the writes it held gone; comparing the sequence number RocksDB
// recovers with the mark catches that. The mark only ever names a sequence
// number that was fsynced before the mark was written, and the file is replaced
// atomically (temp file, fsync, rename, fsync of the directory), so a kill -9
// at any point leaves a mark that the WALs on disk cover: it never raises a
// false alarm.
//
// Two writers keep it current: a recorder about once a second (and at
// close), and the first write of each new WAL (wal_first_write.h), which is
// acknowledged only after the mark names it. So the mark always names the
// WAL that holds the newest acknowledged writes as soon as it holds any,
// and however soon after them cairnd is killed, that WAL deleted or emptied
// loses a write the mark names.
#ifndef CAIRN_STORE_DURABLE_MARK_H_
#define CAIRN_STORE_DURABLE_MARK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"

namespace cairn {

inline constexpr char kDurableMarkFile[] = "CAIRN-DURABLE";

struct DurableMark {
  uint64_t wal_number = 0;  // The WAL current when `sequence` was durable.
  // A write that was durable (fsynced) when the mark was written, so an
  // intact store recovers at least up to it: the recorder's latest write,
  // or the first write of `wal_number`.
  uint64_t sequence = 0;
  // The WAL's file was preallocated: it runs past its records, so that a
  // crash leaves zeros after them, never the file's end (wal_tail.h).
  bool wal_preallocated = false;
  // Written when cairnd closed the store, after its last write. RocksDB
  // then truncates the newest WAL to what it wrote, preallocated or not, so
  // it may end in part of a record that a failed append left.
  bool closed = false;
};

// Reads <dir>/CAIRN-DURABLE. nullopt if there is none (a store written by an
// older cairnd); DataLoss naming the file if it cannot be parsed.
absl::StatusOr<std::optional<DurableMark>> ReadDurableMark(
    const std::string& dir);

// Replaces <dir>/CAIRN-DURABLE atomically and durably.
absl::Status WriteDurableMark(const std::string& dir, const DurableMark& mark);

// Writes the mark of one store directory for the recorder and the first
// writes of WALs, never moving it back. Errors are the caller's to ignore:
// a stale mark is only a weaker check, never a false alarm. Thread-safe.
class DurableMarkWriter {
 public:
  explicit DurableMarkWriter(std::string dir) : dir_(std::move(dir)) {}

  // Writes `mark` unless a mark at or beyond its sequence was written.
  // When WalStarted said that mark.wal_number is preallocated, so does the
  // mark.
  absl::Status Advance(DurableMark mark);

  // WAL `wal_number` holds a durable write at `sequence` (its first), and
  // is preallocated or not: writes that mark.
  absl::Status WalStarted(uint64_t wal_number, uint64_t sequence,
                          bool preallocated);

  // The store is closing after its last write: rewrites the mark as
  // closed (see DurableMark::closed). Nothing may be written after.
  absl::Status Close();

 private:
  absl::Status AdvanceLocked(const DurableMark& mark)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  absl::Mutex mu_;
  std::optional<DurableMark> written_ ABSL_GUARDED_BY(mu_);
  uint64_t preallocated_wal_ ABSL_GUARDED_BY(mu_) = 0;  // 0: none known.
};

// How the writes since the last mark were made (see DurableMarkRecorder).
enum class WalSyncState {
  kSynced,    // Every write was synced: the latest sequence is durable.
  kUnsynced,  // Some were not: SyncWAL makes them durable first.
  kFailed,    // The store failed a write: record nothing (and never call
              // SyncWAL on a WAL writer that failed: RocksDB asserts).
};

// Keeps the mark of one open DB current: Record() now, and a background
// thread records again about once a second while writes come in. Recording
// reads the DB's latest sequence number, asks `sync_state` (a store's
// answer, which it resets), makes the writes durable (SyncWAL when
// kUnsynced) and writes the mark through `writer`. Errors are ignored.
// Thread-safe. REQUIRES: `db` outlives the recorder.
class DurableMarkRecorder {
 public:
  DurableMarkRecorder(rocksdb::DB* db,
                      std::shared_ptr<DurableMarkWriter> writer,
                      std::function<WalSyncState()> sync_state);
  // Stops the thread, records a last time and marks the store closed.
  ~DurableMarkRecorder();

  // Records the mark now if the sequence number moved since the last one.
  void Record();

 private:
  void Loop();

  rocksdb::DB* const db_;
  const std::shared_ptr<DurableMarkWriter> writer_;
  const std::function<WalSyncState()> sync_state_;
  absl::Mutex record_mu_;  // Serialises Record().
  uint64_t recorded_ ABSL_GUARDED_BY(record_mu_) = 0;
  bool has_recorded_ ABSL_GUARDED_BY(record_mu_) = false;
  absl::Mutex stop_mu_;
  bool stop_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread thread_;
};

}  // namespace cairn

#endif  // CAIRN_STORE_DURABLE_MARK_H_
