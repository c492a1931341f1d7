// The cloudml-hypertune file protocol and the early-stopping rules.
#include "jobs/hypertune.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"
#include "tuner/early_stopping.h"

namespace cairn {
namespace {

TEST(HypertuneTest, ParsesStringValuedLinesAndSkipsTornOnes) {
  const std::string text =
      R"({"global_step": "1000", "loss": "0.31", "timestamp": 1525851440.12, "trial": "3"})"
      "\n"
      R"({"global_step": "2000", "loss": "0.25", "timestamp": 1525851441.5, "trial": "3"})"
      "\n"
      R"({"global_step": "3000", "loss": "0.2)";  // Torn by a rewrite.
  std::vector<jobs::HypertuneEntry> e = jobs::ParseHypertune(text);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].global_step, 1000);
  EXPECT_DOUBLE_EQ(e[0].metrics.at("loss"), 0.31);
  EXPECT_EQ(e[0].metrics.count("trial"), 0u);
  EXPECT_DOUBLE_EQ(e[1].timestamp, 1525851441.5);
}

TEST(HypertuneTest, NonNumericMetricLinesAreSkipped) {
  std::vector<jobs::HypertuneEntry> e = jobs::ParseHypertune(
      R"({"global_step": "1", "loss": "abc", "timestamp": 1.0})");
  EXPECT_TRUE(e.empty());
}

// A job's file gets no more than its RPCs would: keys that are not metric
// ids the API accepts, or more than 100 metrics, make the line invalid.
TEST(HypertuneTest, LinesWithKeysTheApiRefusesAreSkipped) {
  std::string many = R"({"global_step": "1", "timestamp": 3.0)";
  for (int i = 0; i <= 100; ++i) absl::StrAppend(&many, ", \"m", i, "\": 1");
  many += "}";
  const std::string text = absl::StrCat(
      R"({"global_step": "1", "val loss": "0.5", "timestamp": 1.0})", "\n",
      R"({"global_step": "1", ")", std::string(200, 'q'),
      R"(": "0.5", "timestamp": 2.0})", "\n", many, "\n",
      R"({"global_step": "1", "val/loss": "0.5", "timestamp": 4.0})");
  std::vector<jobs::HypertuneEntry> e = jobs::ParseHypertune(text);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_DOUBLE_EQ(e[0].timestamp, 4.0);
  EXPECT_DOUBLE_EQ(e[0].metrics.at("val/loss"), 0.5);
}

std::string HypertuneLine(int step, double ts) {
  return absl::StrCat(R"({"global_step": ")", step, R"(", "loss": ")",
                      1.0 / step, R"(", "timestamp": )", ts,
                      R"(, "trial": "1"})", "\n");
}

TEST(HypertuneTest, ReadSinceReturnsOnlyNewerEntriesInFileOrder) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/metrics";
  EXPECT_TRUE(jobs::ReadHypertuneSince(path, 0).empty());  // Missing file.
  {
    std::ofstream out(path);
    for (int i = 1; i <= 100; ++i) out << HypertuneLine(i, 1000 + i);
    out << R"({"global_step": "101", "lo)";  // Torn by a rewrite.
  }
  std::vector<jobs::HypertuneEntry> e = jobs::ReadHypertuneSince(path, 1097);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].global_step, 98);
  EXPECT_EQ(e[2].global_step, 100);
  EXPECT_DOUBLE_EQ(e[2].timestamp, 1100);
  EXPECT_EQ(jobs::ReadHypertuneSince(path, 0).size(), 100u);
  EXPECT_TRUE(jobs::ReadHypertuneSince(path, 1100).empty());
  // An invalid line between new entries is skipped, not a stop.
  {
    std::ofstream out(path, std::ios::app);
    out << "\n"
        << HypertuneLine(101, 1101) << "not json\n"
        << HypertuneLine(102, 1102);
  }
  e = jobs::ReadHypertuneSince(path, 1100);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].global_step, 101);
  EXPECT_EQ(e[1].global_step, 102);
}

cairn::v1::StudySpec Spec(const std::string& rule) {
  cairn::v1::StudySpec spec;
  google::protobuf::TextFormat::ParseFromString(
      "metrics { metric_id: 'loss' goal: MINIMIZE } " + rule, &spec);
  return spec;
}

tuner::Curve Line(int64_t id, double offset, int steps, bool completed) {
  tuner::Curve c;
  c.trial_id = id;
  c.completed = completed;
  for (int s = 1; s <= steps; ++s) c.points.emplace_back(s, offset + 1.0 / s);
  return c;
}

TEST(EarlyStoppingTest, MedianRuleStopsOnlyTrialsWorseThanTheMedian) {
  auto spec = Spec("early_stopping { median { min_steps: 2 } }");
  std::vector<tuner::Curve> done = {Line(1, 0, 10, true), Line(2, 1, 10, true),
                                    Line(3, 2, 10, true)};
  EXPECT_TRUE(tuner::ShouldStop(spec, Line(4, 5, 3, false), done).stop);
  EXPECT_FALSE(tuner::ShouldStop(spec, Line(5, 0.1, 3, false), done).stop);
  // Before min_steps and with too few completed trials: no decision.
  EXPECT_FALSE(tuner::ShouldStop(spec, Line(6, 5, 1, false), done).stop);
  done.pop_back();
  EXPECT_FALSE(tuner::ShouldStop(spec, Line(7, 5, 3, false), done).stop);
}

TEST(EarlyStoppingTest, AshaKeepsTheTopThirdAtEachRung) {
  auto spec =
      Spec("early_stopping { asha { min_resource: 2 reduction_factor: 3 } }");
  std::vector<tuner::Curve> others = {Line(1, 0, 6, false),
                                      Line(2, 1, 6, false)};
  // Third trial at rung 2: best of 3 is kept, worst stops.
  EXPECT_FALSE(tuner::ShouldStop(spec, Line(3, -1, 2, false), others).stop);
  tuner::StopDecision d = tuner::ShouldStop(spec, Line(4, 3, 2, false), others);
  EXPECT_TRUE(d.stop);
  EXPECT_NE(d.reason.find("rung 2"), std::string::npos) << d.reason;
  // Below the first rung nothing is decided.
  EXPECT_FALSE(tuner::ShouldStop(spec, Line(5, 9, 1, false), others).stop);
}

TEST(EarlyStoppingTest, NoRuleNeverStops) {
  auto spec = Spec("");
  EXPECT_FALSE(
      tuner::ShouldStop(spec, Line(1, 100, 10, false), {Line(2, 0, 10, true)})
          .stop);
}

}  // namespace
}  // namespace cairn
