// The text form of numbers on the command lines: decimal integers within
// their range, seconds finite and bounded (CLI11 alone read "010" as 8,
// clamped 99999999999999999999 and let "nan" through).
#include "util/flags/flag_numbers.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(ParseFlagIntegerTest, DecimalOnly) {
  EXPECT_EQ(*util::flags::ParseFlagInteger("010", 0, kMax), 10);
  EXPECT_EQ(*util::flags::ParseFlagInteger("0", 0, kMax), 0);
  EXPECT_EQ(*util::flags::ParseFlagInteger("-7", -10, 10), -7);
  EXPECT_EQ(*util::flags::ParseFlagInteger("9223372036854775807", 0, kMax),
            kMax);
  for (const char* bad :
       {"0x10", "1e3", "+5", " 5", "5 ", "", "-", "1.0", "0b11",
        "99999999999999999999", "9223372036854775808"}) {
    SCOPED_TRACE(bad);
    const absl::Status s = util::flags::ParseFlagInteger(bad, 0, kMax).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("is not a decimal integer from 0 to "
                                       "9223372036854775807"));
  }
}

TEST(ParseFlagIntegerTest, RangeIsNamedAndValueQuotedBriefly) {
  EXPECT_EQ(*util::flags::ParseFlagInteger("1000", 1, 1000), 1000);
  const absl::Status s =
      util::flags::ParseFlagInteger("1001", 1, 1000).status();
  EXPECT_EQ(s.message(), "\"1001\" is not a decimal integer from 1 to 1000");
  EXPECT_FALSE(util::flags::ParseFlagInteger("0", 1, 1000).ok());
  const std::string huge(100000, '7');
  const absl::Status long_value =
      util::flags::ParseFlagInteger(huge, 0, kMax).status();
  EXPECT_LT(long_value.message().size(), 200u);
  EXPECT_THAT(std::string(long_value.message()),
              ::testing::Not(HasSubstr(std::string(65, '7'))));
}

TEST(ParseFlagSecondsTest, NumbersAndDurations) {
  EXPECT_EQ(*util::flags::ParseFlagSeconds("30"), 30);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("2.5"), 2.5);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("1e3"), 1000);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("90s"), 90);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("1h30m"), 5400);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("2d"), 172800);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("1e9"), 1e9);
  EXPECT_EQ(*util::flags::ParseFlagSeconds("0", /*allow_zero=*/true), 0);
}

TEST(ParseFlagSecondsTest, RefusesWhatNoDeadlineOrElapsedTimeIs) {
  for (const char* bad : {"nan", "inf", "-inf", "1e300", "1000000001",
                          "100000000h", "0x10", "-1", "5x", "", "-5s"}) {
    SCOPED_TRACE(bad);
    const absl::Status s =
        util::flags::ParseFlagSeconds(bad, /*allow_zero=*/true).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("is not a number of seconds or a "
                                       "duration"));
  }
  const absl::Status zero = util::flags::ParseFlagSeconds("0").status();
  EXPECT_THAT(zero.message(), HasSubstr("\"0\" is not a positive number of "
                                        "seconds"));
}

}  // namespace
}  // namespace cairn
