// A gtest binary for ci_summary_test (not a ctest test itself): one case
// passes, one skips in its body, one in its fixture's SetUp, one is
// disabled, one fails when $CAIRN_SAMPLE_FAIL is set, and one skips without
// a reason when $CAIRN_SAMPLE_BARE_SKIP is set (which fails the binary). Its
// main is tests/testing/gtest_main.cc, as every test binary's.
#include <cstdlib>

#include "gtest/gtest.h"

namespace cairn {
namespace {

TEST(SkipSample, Passes) { EXPECT_EQ(1 + 1, 2); }

TEST(SkipSample, Skips) { GTEST_SKIP() << "sample reason\nsecond line"; }

TEST(SkipSample, FailsOnRequest) {
  if (std::getenv("CAIRN_SAMPLE_FAIL") != nullptr) FAIL() << "asked to fail";
}

TEST(SkipSample, SkipsWithoutReasonOnRequest) {
  if (std::getenv("CAIRN_SAMPLE_BARE_SKIP") != nullptr) GTEST_SKIP();
}

TEST(SkipSample, DISABLED_Off) {}

class SetUpSkipSample : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_SKIP() << "the fixture's reason"; }
};

TEST_F(SetUpSkipSample, One) { FAIL() << "ran after its SetUp skipped"; }

}  // namespace
}  // namespace cairn
