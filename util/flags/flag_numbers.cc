// See flag_numbers.h.
#include "util/flags/flag_numbers.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "util/flags/durations.h"
#include "util/quote.h"

namespace cairn::util::flags {
namespace {

bool IsDecimalInteger(absl::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Digits, '.', 'e', '-', '+' only: what SimpleAtod reads besides hex floats,
// "inf" and "nan".
bool IsDecimalNumber(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.' &&
        c != 'e' && c != 'E' && c != '-' && c != '+') {
      return false;
    }
  }
  return !text.empty();
}

}  // namespace

absl::StatusOr<int64_t> ParseFlagInteger(absl::string_view text, int64_t min,
                                         int64_t max) {
  int64_t value = 0;
  if (IsDecimalInteger(text) && absl::SimpleAtoi(text, &value) &&
      value >= min && value <= max) {
    return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(util::QuoteForError(text), " is not a decimal integer from ",
                   min, " to ", max));
}

absl::StatusOr<double> ParseFlagSeconds(absl::string_view text,
                                        bool allow_zero) {
  double seconds = -1;
  if (IsDecimalNumber(text)) {
    if (!absl::SimpleAtod(text, &seconds) || !std::isfinite(seconds)) {
      seconds = -1;
    }
  } else if (absl::StatusOr<absl::Duration> d = ParseFlagDuration("", text);
             d.ok()) {
    seconds = absl::ToDoubleSeconds(*d);
  }
  if ((seconds > 0 || (allow_zero && seconds == 0)) &&
      seconds <= kMaxFlagSeconds) {
    return seconds;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      util::QuoteForError(text), " is not a ", allow_zero ? "" : "positive ",
      "number of seconds or a duration (e.g. 30, 90s, 5m, 1h) up to ",
      absl::StrFormat("%.0f", kMaxFlagSeconds), " seconds"));
}

}  // namespace cairn::util::flags
