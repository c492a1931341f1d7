// Online backup: a consistent copy of a live Store in a directory that
// `cairnd --data-dir` can serve from, made while the store takes writes.
#ifndef CAIRN_STORE_BACKUP_H_
#define CAIRN_STORE_BACKUP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/store.h"

namespace cairn {

// Name of the store directory inside a data dir (<data_dir>/store), in
// cairnd's data dirs and in backups alike.
inline constexpr char kStoreDirName[] = "store";

// What a finished backup holds.
struct BackupResult {
  // The backup directory, as made absolute and normalized.
  std::string path;
  // A RocksDB sequence number the backup holds (see AdminStore::Checkpoint).
  uint64_t sequence_number = 0;
  // Studies and trials in the backup, counted by opening it.
  int64_t studies = 0;
  int64_t trials = 0;
  // Regular files in the backup and their total size. Table files that are
  // hard links to the live store's count in full, though they share blocks.
  int64_t files = 0;
  uint64_t size_bytes = 0;
  // Wall time of the whole backup.
  absl::Duration elapsed;
};

// Backs `store` (the store of the data dir `data_dir`) up into `dest`: the
// backup is a data dir whose `store` subdirectory is a plain RocksDB
// directory, so `cairnd --data-dir dest` serves it. Every write acknowledged
// before the call is in the backup; writes to `store` go on meanwhile.
//
// `dest` must be an absolute path; it must not exist or be an empty
// directory, its parent must exist, and it must not be `data_dir` or lie
// inside it (symlinks resolved). The backup is written to a fresh sibling
// `<dest>.tmp-XXXXXX`, opened once with Store::Open (the checks cairnd makes
// when it starts) to count what it holds, fsynced and renamed to `dest`, so a
// crash never leaves a partial backup named `dest` (only a .tmp- sibling,
// which may be deleted). On error nothing named `dest` is created and the
// temporary directory is removed.
//
// Errors: InvalidArgument naming `dest` if it is empty, relative or inside
// the data dir; FailedPrecondition naming it if it is a non-empty directory
// or not a directory, or its parent does not exist; the AdminStore::Checkpoint
// or Store::Open error (with its code) if the copy fails or does not open.
// Thread-safe; several backups (to different destinations) may run at once.
absl::StatusOr<BackupResult> BackupStore(AdminStore& store,
                                         const std::string& data_dir,
                                         const std::string& dest);

}  // namespace cairn

#endif  // CAIRN_STORE_BACKUP_H_
