// Reading a file a user named (a config, a token, a certificate) without
// trusting its size: at most a stated number of bytes is read, so a huge
// or endless file (/dev/zero) is refused instead of filling memory.
#ifndef CAIRN_UTIL_BOUNDED_FILE_H_
#define CAIRN_UTIL_BOUNDED_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace cairn::util {

// The whole of the file at `path` if it holds at most `max_bytes` (reading
// max_bytes + 1 at most). NotFound if it cannot be opened or read;
// InvalidArgument "'PATH' is over N bytes" if it holds more. Messages name
// the path (its first 256 characters); callers add what the file was for.
absl::StatusOr<std::string> ReadFileAtMost(const std::string& path,
                                           size_t max_bytes);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_BOUNDED_FILE_H_
