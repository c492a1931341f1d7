// Byte sizes on the command line: "0", "1048576", "256MB", "2GB".
#ifndef CAIRN_UTIL_FLAGS_BYTE_SIZE_H_
#define CAIRN_UTIL_FLAGS_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::util::flags {

// Parses a non-negative whole number of bytes with an optional suffix
// KB, MB, GB or TB (powers of 1024; case-insensitive; "B" alone allowed).
// InvalidArgument naming `flag` and `text` otherwise (also on overflow).
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view flag,
                                       absl::string_view text);

}  // namespace cairn::util::flags

#endif  // CAIRN_UTIL_FLAGS_BYTE_SIZE_H_
