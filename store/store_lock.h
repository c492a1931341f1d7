// The store directory's lock (RocksDB's LOCK file), held by the tools that
// must not run while a cairnd has the store open: verify and repair.
#ifndef CAIRN_STORE_STORE_LOCK_H_
#define CAIRN_STORE_STORE_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/env.h"

namespace cairn {

// Holds <dir>/LOCK until destroyed. Not thread-safe.
class StoreLock {
 public:
  // Unavailable naming `dir` if another process (or another Store in this
  // process) holds it; NotFound if `dir` holds no database (no CURRENT).
  static absl::StatusOr<std::unique_ptr<StoreLock>> Acquire(
      const std::string& dir);
  ~StoreLock();

 private:
  explicit StoreLock(rocksdb::FileLock* lock) : lock_(lock) {}
  rocksdb::FileLock* const lock_;
};

}  // namespace cairn

#endif  // CAIRN_STORE_STORE_LOCK_H_
