// ParseByteSize: see byte_size.h.
#include "util/flags/byte_size.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cairn::util::flags {
namespace {

// The multiplier of a (lower-case) suffix; 0 if it is not one.
uint64_t Multiplier(absl::string_view suffix) {
  if (suffix.empty() || suffix == "b") return 1;
  if (suffix == "kb") return uint64_t{1} << 10;
  if (suffix == "mb") return uint64_t{1} << 20;
  if (suffix == "gb") return uint64_t{1} << 30;
  if (suffix == "tb") return uint64_t{1} << 40;
  return 0;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view flag,
                                       absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  size_t digits = 0;
  while (digits < lower.size() && absl::ascii_isdigit(lower[digits])) ++digits;
  const uint64_t multiplier =
      Multiplier(absl::string_view(lower).substr(digits));
  uint64_t number = 0;
  if (digits == 0 || multiplier == 0 ||
      !absl::SimpleAtoi(absl::string_view(lower).substr(0, digits), &number) ||
      number > std::numeric_limits<uint64_t>::max() / multiplier) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": '", text.substr(0, 64),
        "' is not a byte size (a whole number with an optional KB, MB, GB "
        "or TB suffix, e.g. 256MB)"));
  }
  return number * multiplier;
}

}  // namespace cairn::util::flags
