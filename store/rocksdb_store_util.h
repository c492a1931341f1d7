// Small helpers shared by the files that implement RocksDbStore: conversions
// between RocksDB and Abseil types, and the naming and id checks used in its
// error messages. Private to store/.
#ifndef CAIRN_STORE_ROCKSDB_STORE_UTIL_H_
#define CAIRN_STORE_ROCKSDB_STORE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"

namespace cairn {
namespace store_internal {

inline absl::string_view ToView(const rocksdb::Slice& s) {
  return absl::string_view(s.data(), s.size());
}

inline rocksdb::Slice ToSlice(absl::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}

// Converts a RocksDB status into an absl::Status, prefixing `context`:
// NotFound, Corruption (DataLoss), NoSpace (ResourceExhausted), Busy/TryAgain/
// TimedOut (Unavailable), InvalidArgument keep their meaning; anything else
// is Internal. OK stays OK.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context);

// InvalidArgument naming `field` unless id > 0.
absl::Status CheckId(absl::string_view field, int64_t id);

// Bytes an unprivileged process may still write on the file system holding
// `path` (statvfs f_bavail). Internal error naming the path on failure.
absl::StatusOr<uint64_t> FreeBytes(const std::string& path);

}  // namespace store_internal
}  // namespace cairn

#endif  // CAIRN_STORE_ROCKSDB_STORE_UTIL_H_
