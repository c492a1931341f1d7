// The durable mark: a small file (CAIRN-DURABLE) in the store directory that
// records a RocksDB sequence number known to be durable and the WAL that was
// current then. RocksDB 7.8 does not track the live WAL in its MANIFEST, so
// an emptied or deleted newest WAL opens silently with the writes it held
// gone; comparing the sequence number RocksDB recovers with the mark catches
// that. The mark only ever names a sequence number that was fsynced before
// the mark was written, and the file is replaced atomically (temp file,
// fsync, rename, fsync of the directory), so a kill -9 at any point leaves a
// mark that the WALs on disk cover: it never raises a false alarm.
#ifndef CAIRN_STORE_DURABLE_MARK_H_
#define CAIRN_STORE_DURABLE_MARK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"

namespace cairn {

inline constexpr char kDurableMarkFile[] = "CAIRN-DURABLE";

struct DurableMark {
  uint64_t wal_number = 0;  // The WAL current when `sequence` was durable.
  uint64_t sequence = 0;    // Every write up to here was durable.
};

// Reads <dir>/CAIRN-DURABLE. nullopt if there is none (a store written by an
// older cairnd); DataLoss naming the file if it cannot be parsed.
absl::StatusOr<std::optional<DurableMark>> ReadDurableMark(
    const std::string& dir);

// Replaces <dir>/CAIRN-DURABLE atomically and durably.
absl::Status WriteDurableMark(const std::string& dir, const DurableMark& mark);

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
// kUnsynced) and writes the mark. Errors are ignored: a stale mark is only a
// weaker check, never a false alarm.
// Thread-safe. REQUIRES: `db` outlives the recorder.
class DurableMarkRecorder {
 public:
  DurableMarkRecorder(rocksdb::DB* db, std::string dir,
                      std::function<WalSyncState()> sync_state);
  // Stops the thread and records a last time.
  ~DurableMarkRecorder();

  // Records the mark now if the sequence number moved since the last one.
  void Record();

 private:
  void Loop();

  rocksdb::DB* const db_;
  const std::string dir_;
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
