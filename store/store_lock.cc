// See store_lock.h.
#include "store/store_lock.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace cairn {

absl::StatusOr<std::unique_ptr<StoreLock>> StoreLock::Acquire(
    const std::string& dir) {
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT")) {
    return absl::NotFoundError(
        absl::StrCat("store directory ", dir, " holds no database"));
  }
  rocksdb::FileLock* lock = nullptr;
  rocksdb::Status s = rocksdb::Env::Default()->LockFile(dir + "/LOCK", &lock);
  if (!s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("store directory ", dir,
                     " is locked: stop the cairnd that has it open first (",
                     s.ToString(), ")"));
  }
  return std::unique_ptr<StoreLock>(new StoreLock(lock));
}

StoreLock::~StoreLock() { rocksdb::Env::Default()->UnlockFile(lock_); }

}  // namespace cairn
