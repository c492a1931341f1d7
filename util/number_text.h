// Numbers as text, one function per purpose: for people to read, for
// messages that must name the exact value, and for command lines a program
// parses back. Each keeps the output its users and their tests rely on.
#ifndef CAIRN_UTIL_NUMBER_TEXT_H_
#define CAIRN_UTIL_NUMBER_TEXT_H_

#include <string>

namespace cairn::util {

// Up to 6 significant digits, printf "%.6g" ("0.123457", "3", "1e-07"):
// for tables and progress lines, where the exact value is noise.
std::string SixDigitNumber(double value);

// printf "%.15g" when that reads back as `value`, else "%.17g" ("0.1",
// "1e-05", "nan"): for error messages that must show the exact value.
std::string RoundTripNumber(double value);

// Integers below 1e15 in magnitude without a fraction ("64"), others the
// shortest text that reads back as `value` (std::to_chars: "0.001",
// "1e+20"): for flags on a command line that another program parses.
std::string ShortestRoundTripNumber(double value);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_NUMBER_TEXT_H_
