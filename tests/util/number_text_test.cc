// util/number_text.h: numbers as text, one function per purpose.
#include "util/number_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace cairn::util {
namespace {

TEST(NumberTextTest, SixDigitNumberIsForPeople) {
  EXPECT_EQ(SixDigitNumber(0.1234567), "0.123457");
  EXPECT_EQ(SixDigitNumber(3), "3");
  EXPECT_EQ(SixDigitNumber(1e-7), "1e-07");
}

TEST(NumberTextTest, RoundTripNumberReadsBackExactly) {
  EXPECT_EQ(RoundTripNumber(0.1), "0.1");
  EXPECT_EQ(RoundTripNumber(1e-5), "1e-05");
  EXPECT_EQ(RoundTripNumber(0.0001), "0.0001");
  EXPECT_EQ(RoundTripNumber(3), "3");
  EXPECT_EQ(RoundTripNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(RoundTripNumber(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(NumberTextTest, ShortestRoundTripNumberIsForCommandLines) {
  EXPECT_EQ(ShortestRoundTripNumber(64), "64");
  EXPECT_EQ(ShortestRoundTripNumber(-3), "-3");
  EXPECT_EQ(ShortestRoundTripNumber(0.001), "0.001");
  EXPECT_EQ(ShortestRoundTripNumber(0.0001), "1e-04");
  EXPECT_EQ(ShortestRoundTripNumber(1e20), "1e+20");
  EXPECT_EQ(ShortestRoundTripNumber(0.1 + 0.2), "0.30000000000000004");
}

TEST(NumberTextTest, BothExactFormsReadBack) {
  for (double v : {1.0 / 3, 2.0 / 3, 1e-300, 123456.789, -7.25e17}) {
    EXPECT_EQ(std::strtod(RoundTripNumber(v).c_str(), nullptr), v);
    EXPECT_EQ(std::strtod(ShortestRoundTripNumber(v).c_str(), nullptr), v);
  }
}

}  // namespace
}  // namespace cairn::util
