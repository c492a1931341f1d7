// MetricDefinitions on log lines: the first capture group as the value,
// as SageMaker reads its logs; non-numbers skipped; bad regexes refused.
#include "sagemaker/metric_definitions.h"

#include "gtest/gtest.h"

namespace cairn::sagemaker {
namespace {

google::protobuf::RepeatedPtrField<cairn::v1::SageMakerMetricDefinition> Defs(
    std::initializer_list<std::pair<const char*, const char*>> defs) {
  google::protobuf::RepeatedPtrField<cairn::v1::SageMakerMetricDefinition> out;
  for (const auto& [name, regex] : defs) {
    auto* d = out.Add();
    d->set_name(name);
    d->set_regex(regex);
  }
  return out;
}

TEST(MetricDefinitionsTest, FirstGroupOfEachMatchingDefinition) {
  auto m =
      MetricMatcher::Create(Defs({{"validation:loss", "val_loss=([0-9\\.]+)"},
                                  {"train:loss", "Loss = (.*?);"},
                                  {"epoch", "epoch (\\d+) of (\\d+)"}}));
  ASSERT_TRUE(m.ok()) << m.status();
  using Pairs = std::vector<std::pair<std::string, double>>;
  EXPECT_EQ(
      m->Match("epoch 3 of 10 val_loss=0.25 Loss = 16.020744;  It"),
      (Pairs{
          {"validation:loss", 0.25}, {"train:loss", 16.020744}, {"epoch", 3}}));
  EXPECT_EQ(m->Match("nothing here"), Pairs{});
  EXPECT_EQ(m->Match("Loss = nan; val_loss=."), Pairs{});
  EXPECT_EQ(m->Match("Loss = 1e-3;"), (Pairs{{"train:loss", 0.001}}));
}

TEST(MetricDefinitionsTest, BadRegexesNameFieldAndValue) {
  auto m = MetricMatcher::Create(Defs({{"a", "no_group"}}));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("MetricDefinitions.Regex 'no_group'"),
            std::string::npos);
  m = MetricMatcher::Create(Defs({{"a", "(unclosed"}}));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("does not compile"), std::string::npos);
}

TEST(MetricDefinitionsTest, LinearTimeOnHostileInput) {
  // Catastrophic for a backtracking engine; RE2 matches in linear time.
  auto m = MetricMatcher::Create(Defs({{"x", "(a+)+$"}}));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->Match(std::string(100000, 'a') + "!").empty());
}

}  // namespace
}  // namespace cairn::sagemaker
