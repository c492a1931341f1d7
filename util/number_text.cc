// See number_text.h.
#include "util/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cairn::util {

std::string SixDigitNumber(double value) {
  return absl::StrFormat("%.6g", value);
}

std::string RoundTripNumber(double value) {
  std::string s = absl::StrFormat("%.15g", value);
  if (std::strtod(s.c_str(), nullptr) != value) {
    s = absl::StrFormat("%.17g", value);
  }
  return s;
}

std::string ShortestRoundTripNumber(double value) {
  if (std::floor(value) == value && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, end);
}

}  // namespace cairn::util
