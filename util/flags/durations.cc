// See durations.h.
#include "util/flags/durations.h"

#include <cstdint>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cairn::util::flags {

absl::StatusOr<absl::Duration> ParseFlagDuration(absl::string_view flag,
                                                 absl::string_view text) {
  absl::Duration d;
  absl::string_view days = text;
  int64_t n = 0;
  bool ok = false;
  if (absl::ConsumeSuffix(&days, "d") && absl::SimpleAtoi(days, &n) &&
      n <= 1000000) {
    d = absl::Hours(24) * n;
    ok = true;
  } else {
    ok = absl::ParseDuration(text, &d);
  }
  if (ok && d > absl::ZeroDuration() && d != absl::InfiniteDuration()) {
    return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": '", text.substr(0, 64),
                   "' is not a positive duration (e.g. 90m, 12h, 30d)"));
}

}  // namespace cairn::util::flags
