// Helpers shared by the files that implement RocksDbStore.
#include "store/rocksdb_store_util.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cairn {
namespace store_internal {

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(msg);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(msg);
  }
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}

absl::Status CheckId(absl::string_view field, int64_t id) {
  if (id > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be > 0, got ", id));
}

absl::StatusOr<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs st;
  if (statvfs(path.c_str(), &st) != 0) {
    return absl::InternalError(
        absl::StrCat("statvfs of store at ", path, ": ", strerror(errno)));
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace store_internal
}  // namespace cairn
