// CLI11 validators for the text form of numbers in flags (flag_numbers.h),
// shared by cairn and cairnd. Header-only, so that cairn::api itself does
// not depend on CLI11: a target including this links CLI11::CLI11. Use with
// ->transform(), which passes the rewritten text on to the option.
#ifndef CAIRN_UTIL_FLAGS_FLAG_VALIDATORS_H_
#define CAIRN_UTIL_FLAGS_FLAG_VALIDATORS_H_

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/flags/flag_numbers.h"

namespace cairn::util::flags {

// SECONDS or a duration ("90s", "5m", "1h"; ParseFlagSeconds), rewritten to
// seconds (all 17 digits) for the double option behind it.
inline CLI::Validator SecondsFlag(bool allow_zero = false) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        absl::StatusOr<double> seconds = ParseFlagSeconds(text, allow_zero);
        if (!seconds.ok()) return std::string(seconds.status().message());
        text = absl::StrFormat("%.17g", *seconds);
        return "";
      },
      "SECONDS|DURATION");
}

// A decimal integer in [min, max] (ParseFlagInteger), rewritten without
// leading zeros for the integer option behind it (CLI11 reads "010" as 8).
inline CLI::Validator IntegerFlag(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        absl::StatusOr<int64_t> n = ParseFlagInteger(text, min, max);
        if (!n.ok()) return std::string(n.status().message());
        text = absl::StrCat(*n);
        return "";
      },
      "INT");
}

}  // namespace cairn::util::flags

#endif  // CAIRN_UTIL_FLAGS_FLAG_VALIDATORS_H_
