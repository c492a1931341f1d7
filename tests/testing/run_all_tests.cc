#include "tests/testing/run_all_tests.h"

#include <cstdio>
#include <string>

namespace cairn::testing {
namespace {

constexpr size_t kMaxReason = 1000;

// The message of the first skip recorded in `result`, or nullptr.
const char* SkipMessage(const ::testing::TestResult& result) {
  for (int i = 0; i < result.total_part_count(); ++i) {
    const ::testing::TestPartResult& part = result.GetTestPartResult(i);
    if (part.skipped()) return part.message();
  }
  return nullptr;
}

// Why `info` of `suite` was skipped: its own GTEST_SKIP, else its suite's
// SetUpTestSuite's, else a global Environment's; "" when none gave one.
std::string ReasonOf(const ::testing::TestSuite& suite,
                     const ::testing::TestInfo& info) {
  for (const ::testing::TestResult* r :
       {info.result(), &suite.ad_hoc_test_result(),
        &::testing::UnitTest::GetInstance()->ad_hoc_test_result()}) {
    if (const char* m = SkipMessage(*r); m != nullptr) return OneLineReason(m);
  }
  return "";
}

struct Skips {
  int with_reason = 0;
  int without_reason = 0;
};

// Prints the SKIPPED lines of `suite` (a FAILED line for a skip without a
// reason) and counts them into `skips`.
void PrintSkips(const ::testing::TestSuite& suite, Skips& skips) {
  for (int j = 0; j < suite.total_test_count(); ++j) {
    const ::testing::TestInfo& info = *suite.GetTestInfo(j);
    std::string reason;
    if (info.should_run() && info.result()->Skipped()) {
      reason = ReasonOf(suite, info);
    } else if (!info.should_run() && info.is_reportable() &&
               std::string(info.name()).rfind("DISABLED_", 0) == 0) {
      reason = "disabled (DISABLED_ prefix)";
    } else {
      continue;
    }
    if (reason.empty()) {
      std::printf(
          "FAILED [gtest] %s.%s: skipped without a reason (GTEST_SKIP() << "
          "\"why\" is required)\n",
          suite.name(), info.name());
      ++skips.without_reason;
      continue;
    }
    std::printf("SKIPPED [gtest] %s.%s: %s\n", suite.name(), info.name(),
                reason.c_str());
    ++skips.with_reason;
  }
}

}  // namespace

std::string OneLineReason(const std::string& message) {
  std::string out;
  for (char c : message) {
    if (c == '\n') {
      out += " | ";
    } else if (c != '\r') {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '|')) {
    out.pop_back();
  }
  if (out.size() > kMaxReason) out = out.substr(0, kMaxReason - 3) + "...";
  return out;
}

int RunAllTests() {
  const int rc = RUN_ALL_TESTS();
  if (rc != 0) return 1;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  Skips skips;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    PrintSkips(*unit.GetTestSuite(i), skips);
  }
  if (skips.without_reason > 0) {
    std::printf("%d test(s) skipped without a reason: exit 1\n",
                skips.without_reason);
    std::fflush(stdout);
    return 1;
  }
  if (skips.with_reason == 0) return 0;
  std::printf("%d test(s) skipped: exit %d (ctest: Skipped)\n",
              skips.with_reason, kSkipExitCode);
  std::fflush(stdout);
  return kSkipExitCode;
}

}  // namespace cairn::testing
