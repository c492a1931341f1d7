// The exit status of Cairn's gtest binaries, honest about skips. ctest only
// sees a binary's exit status, so a binary whose cases passed or called
// GTEST_SKIP would show "Passed" and its skips would hide among the passes.
// Every test binary ends through RunAllTests(): the default main
// (gtest_main.cc, which cairn_add_test links) and the binaries with their
// own main alike.
#ifndef CAIRN_TESTS_TESTING_RUN_ALL_TESTS_H_
#define CAIRN_TESTS_TESTING_RUN_ALL_TESTS_H_

#include <string>

#include "gtest/gtest.h"

namespace cairn::testing {

// ctest's SKIP_RETURN_CODE for every test (cairn_add_test sets it).
inline constexpr int kSkipExitCode = 77;

// Runs every test (RUN_ALL_TESTS). Returns 1 when any failed or was skipped
// without a reason (printing `FAILED [gtest] Suite.Name: skipped without a
// reason ...`: a skip must say why, for CI to judge it); otherwise
// kSkipExitCode when any test was skipped (GTEST_SKIP in the test, its
// SetUp, its suite's SetUpTestSuite or an Environment) or is disabled
// (DISABLED_), after printing one line per skip to stdout,
//   SKIPPED [gtest] Suite.Name: reason
// (the reason on one line, at most 1,000 bytes), which scripts/ci_summary.py
// reads and checks against .ci/allowed_skips; 0 when every test ran and
// passed. REQUIRES: ::testing::InitGoogleTest was called.
int RunAllTests();

// The reason of a skip as one line of at most 1,000 bytes: newlines become
// " | ", the rest is cut with "...". "" stays "".
std::string OneLineReason(const std::string& message);

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_RUN_ALL_TESTS_H_
