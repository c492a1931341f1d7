// DescribeHyperParameterTuningJob's counters and best job from a tuning
// job's trials: every trial counted once in each group, the best job the
// Completed one with the best objective for the objective's direction.
#include "sagemaker/tuning_job_view.h"

#include <vector>

#include "gtest/gtest.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::Trial;

Trial Job(int id, Trial::State state, double loss = -1) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  auto* p = t.add_parameters();
  p->set_parameter_id("depth");
  p->mutable_value()->set_number_value(id);
  if (loss >= 0) {
    auto* m = t.mutable_final_measurement()->add_metrics();
    m->set_metric_id("validation_loss");
    m->set_value(loss);
  }
  return t;
}

std::vector<Trial> Trials() {
  Trial stopped = Job(6, Trial::INFEASIBLE);
  stopped.set_infeasible_reason(kStoppedReason);
  return {Job(1, Trial::SUCCEEDED, 0.5), Job(2, Trial::SUCCEEDED, 0.2),
          Job(3, Trial::ACTIVE),         Job(4, Trial::FAILED),
          Job(5, Trial::SUCCEEDED),      stopped,
          Job(7, Trial::SUCCEEDED, 0.9)};
}

TEST(TuningJobViewTest, CountersAddUp) {
  const nlohmann::json c = TuningCounters(Trials(), {"validation:loss", true});
  const nlohmann::json jobs = c["TrainingJobStatusCounters"];
  EXPECT_EQ(jobs["Completed"], 4);
  EXPECT_EQ(jobs["InProgress"], 1);
  EXPECT_EQ(jobs["NonRetryableError"], 1);
  EXPECT_EQ(jobs["RetryableError"], 0);
  EXPECT_EQ(jobs["Stopped"], 1);
  const nlohmann::json objectives = c["ObjectiveStatusCounters"];
  EXPECT_EQ(objectives["Succeeded"], 3);
  EXPECT_EQ(objectives["Pending"], 1);
  EXPECT_EQ(objectives["Failed"], 3);  // failed, no metric, stopped
}

TEST(TuningJobViewTest, BestJobFollowsTheObjectiveDirection) {
  const nlohmann::json lowest =
      BestTrainingJob(Trials(), {"validation:loss", true}, "tune", "studies/4");
  ASSERT_TRUE(lowest.is_object());
  EXPECT_EQ(lowest["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/4", 2));
  EXPECT_EQ(lowest["TrainingJobStatus"], "Completed");
  EXPECT_EQ(lowest["TunedHyperParameters"]["depth"], "2");
  const nlohmann::json metric =
      lowest["FinalHyperParameterTuningJobObjectiveMetric"];
  EXPECT_EQ(metric["Type"], "Minimize");
  EXPECT_EQ(metric["MetricName"], "validation:loss");
  EXPECT_DOUBLE_EQ(metric["Value"].get<double>(), 0.2);

  const nlohmann::json highest = BestTrainingJob(
      Trials(), {"validation:loss", false}, "tune", "studies/4");
  EXPECT_EQ(highest["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/4", 7));
  EXPECT_EQ(highest["FinalHyperParameterTuningJobObjectiveMetric"]["Type"],
            "Maximize");

  EXPECT_TRUE(BestTrainingJob({Job(1, Trial::ACTIVE)},
                              {"validation:loss", true}, "tune", "studies/4")
                  .is_null());
}

}  // namespace
}  // namespace cairn::sagemaker
