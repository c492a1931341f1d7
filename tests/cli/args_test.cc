// name=value, STUDY and TRIAL argument parsing.
#include "cli/args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn::cli {
namespace {

using ::testing::HasSubstr;

TEST(ParseMetricAssignmentTest, ParsesNumbers) {
  struct Case {
    const char* token;
    const char* name;
    double value;
  } cases[] = {{"loss=0.25", "loss", 0.25}, {"acc=1", "acc", 1},
               {"x=-3.5", "x", -3.5},       {"x=+2", "x", 2},
               {"lr=1e-3", "lr", 1e-3},     {"a.b/c=7E2", "a.b/c", 700},
               {"eq=1=", "eq", 0 /*error*/}};
  for (const Case& c : cases) {
    auto m = ParseMetricAssignment(c.token);
    if (std::string(c.token) == "eq=1=") {
      EXPECT_FALSE(m.ok()) << c.token;
      continue;
    }
    ASSERT_TRUE(m.ok()) << c.token << ": " << m.status();
    EXPECT_EQ(m->metric_id(), c.name);
    EXPECT_DOUBLE_EQ(m->value(), c.value);
  }
}

TEST(ParseMetricAssignmentTest, ErrorsNameTheToken) {
  for (const char* token : {"loss", "=1", "loss=", "loss=abc", "loss=1.5x",
                            "loss=nan", "loss=inf", "loss=+-1", "loss= 1"}) {
    auto m = ParseMetricAssignment(token);
    ASSERT_FALSE(m.ok()) << token;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(),
                HasSubstr(std::string("\"") + token + "\""));
  }
}

TEST(ParseMetricAssignmentsTest, KeepsOrderAndRejectsDuplicates) {
  auto ms = ParseMetricAssignments({"loss=1", "acc=0.5"});
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_EQ(ms->size(), 2u);
  EXPECT_EQ((*ms)[0].metric_id(), "loss");
  EXPECT_EQ((*ms)[1].metric_id(), "acc");

  auto dup = ParseMetricAssignments({"loss=1", "loss=2"});
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("\"loss=2\""));
  EXPECT_THAT(dup.status().message(), HasSubstr("twice"));

  auto bad = ParseMetricAssignments({"loss=1", "acc"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("\"acc\""));

  auto none = ParseMetricAssignments({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ParseStudyRefTest, NumbersNamesAndDisplayNames) {
  auto n = ParseStudyRef("12");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->name, "studies/12");
  EXPECT_EQ(n->display_name, "");

  auto full = ParseStudyRef("studies/3");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->name, "studies/3");

  auto display = ParseStudyRef("branin");
  ASSERT_TRUE(display.ok());
  EXPECT_EQ(display->name, "");
  EXPECT_EQ(display->display_name, "branin");

  auto mixed = ParseStudyRef("12b");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->display_name, "12b");

  for (const char* bad : {"", "studies/", "studies/x", "studies/1/trials/2"}) {
    auto r = ParseStudyRef(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(TrialNameTest, NumbersAndFullNames) {
  auto n = TrialName("studies/4", "17");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, "studies/4/trials/17");

  auto full = TrialName("studies/4", "studies/4/trials/2");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(*full, "studies/4/trials/2");

  auto other = TrialName("studies/4", "studies/5/trials/2");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("studies/5/trials/2"));
  EXPECT_THAT(other.status().message(), HasSubstr("studies/4"));

  for (const char* bad : {"", "x", "-1", "studies/4/trials/", "studies/4/t/2",
                          "studies//trials/2"}) {
    auto r = TrialName("studies/4", bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

}  // namespace
}  // namespace cairn::cli
