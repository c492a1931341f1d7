// OptimalTrialIndices: the single best trial and the Pareto front, with
// mixed goals, ties and trials that cannot count.
#include "trials/optimal.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::MetricSpec;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

StudySpec Spec(const std::vector<std::pair<std::string, MetricSpec::Goal>>& m) {
  StudySpec spec;
  for (const auto& [id, goal] : m) {
    MetricSpec* metric = spec.add_metrics();
    metric->set_metric_id(id);
    metric->set_goal(goal);
  }
  return spec;
}

Trial Done(int64_t id, const std::map<std::string, double>& values,
           Trial::State state = Trial::SUCCEEDED) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  for (const auto& [k, v] : values) {
    auto* metric = t.mutable_final_measurement()->add_metrics();
    metric->set_metric_id(k);
    metric->set_value(v);
  }
  return t;
}

std::vector<size_t> Optimal(const StudySpec& spec,
                            const std::vector<Trial>& trials) {
  std::vector<const Trial*> ptrs;
  for (const Trial& t : trials) ptrs.push_back(&t);
  return OptimalTrialIndices(spec, ptrs);
}

TEST(OptimalTest, SingleObjectiveBestWithTiesToTheLowestId) {
  const StudySpec min = Spec({{"loss", MetricSpec::MINIMIZE}});
  const std::vector<Trial> trials = {
      Done(1, {{"loss", 3}}), Done(2, {{"loss", 1}}), Done(3, {{"loss", 1}}),
      Done(4, {{"loss", 0}}, Trial::FAILED), Done(5, {{"other", -9}})};
  EXPECT_THAT(Optimal(min, trials), ElementsAre(1));
  const StudySpec max = Spec({{"loss", MetricSpec::MAXIMIZE}});
  EXPECT_THAT(Optimal(max, trials), ElementsAre(0));
  EXPECT_THAT(Optimal(min, {Done(1, {{"loss", 1}}, Trial::ACTIVE)}), IsEmpty());
}

TEST(OptimalTest, ParetoFrontWithMixedGoals) {
  // Minimize cost, maximize accuracy.
  const StudySpec spec =
      Spec({{"cost", MetricSpec::MINIMIZE}, {"acc", MetricSpec::MAXIMIZE}});
  const std::vector<Trial> trials = {
      Done(1, {{"cost", 1}, {"acc", 0.5}}),  // Front: cheapest.
      Done(2, {{"cost", 2}, {"acc", 0.4}}),  // Dominated by 1.
      Done(3, {{"cost", 5}, {"acc", 0.9}}),  // Front: most accurate.
      Done(4, {{"cost", 3}, {"acc", 0.7}}),  // Front.
      Done(5, {{"cost", 3}, {"acc", 0.7}}),  // Equal to 4: both kept.
      Done(6, {{"cost", 0}}),                // Missing acc: not counted.
      Done(7, {{"cost", 0}, {"acc", 1}}, Trial::INFEASIBLE)};
  EXPECT_THAT(Optimal(spec, trials), ElementsAre(0, 2, 3, 4));
}

TEST(OptimalTest, BestFinalValuesPerMetricByGoalOverSucceededTrials) {
  StudySpec spec =
      Spec({{"cost", MetricSpec::MINIMIZE}, {"acc", MetricSpec::MAXIMIZE}});
  spec.add_metrics()->set_metric_id("free");  // GOAL_UNSPECIFIED: skipped.
  const std::vector<Trial> trials = {
      Done(1, {{"cost", 2}, {"acc", 0.5}, {"free", 1}}),
      Done(2, {{"cost", 3}, {"acc", 0.9}}),
      Done(3, {{"cost", 1}}),  // Counts for the metric it reports.
      Done(4, {{"cost", 0}, {"acc", 1}}, Trial::INFEASIBLE)};
  std::vector<const Trial*> ptrs;
  for (const Trial& t : trials) ptrs.push_back(&t);
  EXPECT_EQ(BestFinalValues(spec, ptrs),
            (std::map<std::string, double>{{"acc", 0.9}, {"cost", 1}}));
  EXPECT_THAT(BestFinalValues(spec, {}), IsEmpty());
}

}  // namespace
}  // namespace cairn
