// SummarizeStudy (trials/study_summary.h): counts by state, best values by
// goal, and the latest metrics of pending trials only.
#include "trials/study_summary.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using cairn::v1::MetricSpec;
using cairn::v1::Trial;

Trial WithFinal(int64_t id, Trial::State state, double loss) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  auto* m = t.mutable_final_measurement()->add_metrics();
  m->set_metric_id("loss");
  m->set_value(loss);
  return t;
}

TEST(StudySummaryTest, CountsBestAndRunningMetrics) {
  cairn::v1::Study study;
  study.set_name("studies/3");
  auto* metric = study.mutable_spec()->add_metrics();
  metric->set_metric_id("loss");
  metric->set_goal(MetricSpec::MINIMIZE);
  TrialTable trials;
  trials.Put(WithFinal(1, Trial::SUCCEEDED, 0.5));
  trials.Put(WithFinal(2, Trial::SUCCEEDED, 0.25));
  trials.Put(WithFinal(3, Trial::INFEASIBLE, 0.01));
  Trial running;
  running.set_id(4);
  running.set_state(Trial::ACTIVE);
  trials.Put(running);

  std::map<int64_t, Measurement> last;
  auto* point = last[4].add_metrics();
  point->set_metric_id("loss");
  point->set_value(0.75);
  last[2] = last[4];  // A finished trial's leftover is not running.

  StudySummary summary = SummarizeStudy(study, trials, last);
  EXPECT_EQ(summary.study.name(), "studies/3");
  EXPECT_EQ(summary.trials_by_state,
            (std::map<std::string, int64_t>{
                {"SUCCEEDED", 2}, {"INFEASIBLE", 1}, {"ACTIVE", 1}}));
  EXPECT_EQ(summary.best_by_metric,
            (std::map<std::string, double>{{"loss", 0.25}}));
  ASSERT_EQ(summary.running_metrics.size(), 1u);
  EXPECT_EQ(summary.running_metrics.at(4).at("loss"), 0.75);
}

}  // namespace
}  // namespace cairn
