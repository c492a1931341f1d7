// The one text form of numbers on Cairn's command lines (cairn and cairnd):
// integers are plain decimal, seconds are a finite decimal number or a
// duration, both within stated bounds. CLI11 on its own reads "010" as 8,
// "0x10" as 16, clamps 99999999999999999999 to INT64_MAX and lets "nan"
// through; these parsers refuse all of that with a message quoting at most
// 64 characters of the value. Pure and thread-safe.
#ifndef CAIRN_UTIL_FLAGS_FLAG_NUMBERS_H_
#define CAIRN_UTIL_FLAGS_FLAG_NUMBERS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::util::flags {

// The most seconds a SECONDS|DURATION flag takes (about 31 years): more is
// no deadline, poll interval or elapsed time, and would overflow the
// milliseconds and nanoseconds they become.
inline constexpr double kMaxFlagSeconds = 1e9;

// A decimal integer in [min, max]: an optional '-' and 1 to 19 digits
// ("010" is ten; "0x10", "1e3", "+5", " 5" and "" are refused).
// InvalidArgument quoting `text` and naming the range otherwise.
absl::StatusOr<int64_t> ParseFlagInteger(absl::string_view text, int64_t min,
                                         int64_t max);

// Seconds: a finite decimal number ("30", "2.5") or a duration ("90s", "5m",
// "1h30m", "2d"; durations.h), more than zero (or zero as well with
// `allow_zero`) and at most kMaxFlagSeconds. InvalidArgument quoting `text`
// otherwise.
absl::StatusOr<double> ParseFlagSeconds(absl::string_view text,
                                        bool allow_zero = false);

}  // namespace cairn::util::flags

#endif  // CAIRN_UTIL_FLAGS_FLAG_NUMBERS_H_
