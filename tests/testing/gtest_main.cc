// The main of every gtest binary cairn_add_test builds (instead of
// gtest_main): RunAllTests() makes a skip ctest's "Skipped".
#include "gtest/gtest.h"
#include "tests/testing/run_all_tests.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return cairn::testing::RunAllTests();
}
