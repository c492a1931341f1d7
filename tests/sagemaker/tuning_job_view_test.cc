// DescribeHyperParameterTuningJob's counters and best job from a tuning
// job's trials: every trial counted once in each group, the best job the
// Completed one with the best objective for the objective's direction.
#include "sagemaker/tuning_job_view.h"

#include <vector>

#include "gtest/gtest.h"
#include "sagemaker/container_files.h"
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
  Trial early = Job(8, Trial::SUCCEEDED, 0.1);  // stopped early: not best
  early.set_stopped_early(true);
  return {Job(1, Trial::SUCCEEDED, 0.5), Job(2, Trial::SUCCEEDED, 0.2),
          Job(3, Trial::ACTIVE),         Job(4, Trial::FAILED),
          Job(5, Trial::SUCCEEDED),      stopped,
          Job(7, Trial::SUCCEEDED, 0.9), early};
}

// A tuning job's study tuning "depth" for validation:loss.
cairn::v1::Study LossStudy(bool minimize) {
  cairn::v1::Study study;
  study.set_name("studies/4");
  study.set_display_name("tune");
  auto& labels = *study.mutable_spec()->mutable_labels();
  labels["sagemaker"] = kTuningJobLabel;
  labels[kObjectiveLabel] = "validation:loss";
  auto* metric = study.mutable_spec()->add_metrics();
  metric->set_metric_id("validation_loss");
  metric->set_goal(minimize ? cairn::v1::MetricSpec::MINIMIZE
                            : cairn::v1::MetricSpec::MAXIMIZE);
  return study;
}

TEST(TuningJobViewTest, CountersAddUp) {
  const nlohmann::json c = TuningCounters(Trials(), {"validation:loss", true});
  const nlohmann::json jobs = c["TrainingJobStatusCounters"];
  EXPECT_EQ(jobs["Completed"], 4);
  EXPECT_EQ(jobs["InProgress"], 1);
  EXPECT_EQ(jobs["NonRetryableError"], 1);
  EXPECT_EQ(jobs["RetryableError"], 0);
  EXPECT_EQ(jobs["Stopped"], 2);  // stopped, and stopped early
  const nlohmann::json objectives = c["ObjectiveStatusCounters"];
  EXPECT_EQ(objectives["Succeeded"], 4);  // the early-stopped one's too
  EXPECT_EQ(objectives["Pending"], 1);
  EXPECT_EQ(objectives["Failed"], 3);  // failed, no metric, stopped
}

TEST(TuningJobViewTest, StoppedTuningJobIsStoppingWhileAJobRuns) {
  cairn::v1::Study study;
  study.set_state(cairn::v1::Study::ACTIVE);
  EXPECT_EQ(TuningJobStatus(study, {}), "InProgress");
  study.set_state(cairn::v1::Study::INACTIVE);
  Trial ending = Job(1, Trial::ACTIVE);  // its container gets SIGTERM
  ending.mutable_job()->set_state(cairn::v1::TrialJob::STOPPING);
  Trial done = Job(2, Trial::SUCCEEDED, 0.5);
  done.mutable_job()->set_state(cairn::v1::TrialJob::SUCCEEDED);
  EXPECT_EQ(TuningJobStatus(study, {ending, done}), "Stopping");
  // Ended, but its job still runs (stopped after the trial ended).
  ending.set_state(Trial::SUCCEEDED);
  EXPECT_EQ(TuningJobStatus(study, {ending, done}), "Stopping");
  ending.mutable_job()->set_state(cairn::v1::TrialJob::CANCELLED);
  EXPECT_EQ(TuningJobStatus(study, {ending, done}), "Stopped");
  study.set_state(cairn::v1::Study::COMPLETED);
  EXPECT_EQ(TuningJobStatus(study, {ending, done}), "Completed");
}

TEST(TuningJobViewTest, BestJobFollowsTheObjectiveDirection) {
  const nlohmann::json lowest = BestTrainingJob(LossStudy(true), Trials());
  ASSERT_TRUE(lowest.is_object());
  EXPECT_EQ(lowest["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/4", 2));
  EXPECT_EQ(lowest["TrainingJobArn"],
            TrainingJobArn(TuningTrainingJobName("tune", "studies/4", 2)));
  EXPECT_EQ(lowest["TuningJobName"], "tune");
  EXPECT_EQ(lowest["TrainingJobStatus"], "Completed");
  EXPECT_EQ(lowest["ObjectiveStatus"], "Succeeded");
  EXPECT_EQ(lowest["TunedHyperParameters"]["depth"], "2");
  const nlohmann::json metric =
      lowest["FinalHyperParameterTuningJobObjectiveMetric"];
  EXPECT_EQ(metric["Type"], "Minimize");
  EXPECT_EQ(metric["MetricName"], "validation:loss");
  EXPECT_DOUBLE_EQ(metric["Value"].get<double>(), 0.2);

  const nlohmann::json highest = BestTrainingJob(LossStudy(false), Trials());
  EXPECT_EQ(highest["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/4", 7));
  EXPECT_EQ(highest["FinalHyperParameterTuningJobObjectiveMetric"]["Type"],
            "Maximize");

  EXPECT_TRUE(
      BestTrainingJob(LossStudy(true), {Job(1, Trial::ACTIVE)}).is_null());
}

TEST(TuningJobViewTest, SummaryOfEachJob) {
  Trial failed = Job(4, Trial::FAILED);
  failed.set_infeasible_reason("exit code 1");
  failed.mutable_end_time()->set_seconds(50);
  auto s = TuningTrainingJobSummary(LossStudy(true), failed);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)["TrainingJobStatus"], "Failed");
  EXPECT_EQ((*s)["FailureReason"], "exit code 1");
  EXPECT_EQ((*s)["ObjectiveStatus"], "Failed");
  EXPECT_EQ((*s)["TrainingEndTime"], 50.0);
  EXPECT_FALSE(s->contains("FinalHyperParameterTuningJobObjectiveMetric"));
  s = TuningTrainingJobSummary(LossStudy(true), Trials().back());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)["TrainingJobStatus"], "Stopped");
  EXPECT_EQ((*s)["FinalHyperParameterTuningJobObjectiveMetric"]["Value"], 0.1);
  s = TuningTrainingJobSummary(LossStudy(true), Job(3, Trial::ACTIVE));
  EXPECT_EQ((*s)["ObjectiveStatus"], "Pending");
  EXPECT_FALSE(s->contains("TrainingEndTime"));
}

TEST(TuningJobViewTest, OverallBestCountsTheParentsJobs) {
  std::vector<Trial> trials = Trials();
  Trial prior = Job(9, Trial::SUCCEEDED, 0.05);
  (*prior.mutable_labels())["sagemaker-warm-start"] = "parent";
  trials.push_back(prior);
  const Trial* best = OverallBestTrial(LossStudy(true), trials);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->id(), 9);
  EXPECT_EQ(BestTrainingJob(LossStudy(true), trials)["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/4", 2));
}

constexpr char kRequest[] = R"json({"HyperParameterTuningJobName": "tune",
 "HyperParameterTuningJobConfig": {"Strategy": "Random",
   "HyperParameterTuningJobObjective": {"Type": "Maximize",
     "MetricName": "acc"},
   "ResourceLimits": {"MaxNumberOfTrainingJobs": 4,
     "MaxParallelTrainingJobs": 2},
   "ParameterRanges": {"IntegerParameterRanges": [{"Name": "depth",
     "MinValue": "1", "MaxValue": "9"}]},
   "TrainingJobEarlyStoppingType": "Auto"},
 "TrainingJobDefinition": {"StaticHyperParameters": {"epochs": "3"},
   "AlgorithmSpecification": {"TrainingImage": "localhost/t:1",
     "TrainingInputMode": "File",
     "MetricDefinitions": [{"Name": "acc", "Regex": "acc=([0-9.]+)"}]},
   "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
   "OutputDataConfig": {"S3OutputPath": "s3://bkt/out"},
   "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
     "VolumeSizeInGB": 1}}})json";

TEST(TuningJobViewTest, StudyOfARequestAndTheRequestOfATrial) {
  auto request = ParseCreateTuningJob(kRequest);
  ASSERT_TRUE(request.ok()) << request.status();
  cairn::v1::Study study = TuningJobStudy(*request);
  study.set_name("studies/9");
  EXPECT_EQ(study.display_name(), "tune");
  const cairn::v1::StudySpec& spec = study.spec();
  EXPECT_EQ(spec.max_trials(), 4);
  EXPECT_EQ(spec.max_parallel_trials(), 2);
  EXPECT_EQ(spec.algorithm(), cairn::v1::StudySpec::RANDOM_SEARCH);
  EXPECT_TRUE(spec.early_stopping().has_median());
  ASSERT_EQ(spec.parameters_size(), 1);
  ASSERT_EQ(spec.metrics_size(), 1);
  EXPECT_EQ(spec.metrics(0).goal(), cairn::v1::MetricSpec::MAXIMIZE);
  EXPECT_EQ(spec.labels().at("sagemaker"), kTuningJobLabel);
  EXPECT_EQ(spec.labels().at(kObjectiveLabel), "acc");
  EXPECT_TRUE(spec.job_template().has_container());
  EXPECT_EQ(spec.job_template().container().image(), "localhost/t:1");

  auto trial_request = TrialTrainingRequest(study, Job(3, Trial::ACTIVE));
  ASSERT_TRUE(trial_request.ok()) << trial_request.status();
  EXPECT_EQ(trial_request->training_job_name(),
            TuningTrainingJobName("tune", "studies/9", 3));
  EXPECT_EQ(trial_request->hyper_parameters().at("epochs"), "3");
  EXPECT_EQ(trial_request->hyper_parameters().at("depth"), "3");

  // A training job's study runs its request unchanged.
  cairn::v1::Study single = TrainingJobStudy(request->training);
  auto same = TrialTrainingRequest(single, Job(1, Trial::ACTIVE));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->training_job_name(), "tune");
  EXPECT_FALSE(same->hyper_parameters().contains("depth"));
}

TEST(TuningJobViewTest, ATrialsJobNameParsesBack) {
  const std::string name = TuningTrainingJobName("tune-a-1", "studies/9", 12);
  auto ref = ParseTuningTrainingJobName(name);
  ASSERT_TRUE(ref.has_value()) << name;
  EXPECT_EQ(ref->tuning_name, "tune-a-1");
  EXPECT_EQ(ref->trial_id, 12);
  for (const char* other : {"xgb-1", "tune-01-0123abcd", "tune-001-0123abc",
                            "tune-001-0123abcg", "-001-0123abcd", "001"}) {
    EXPECT_FALSE(ParseTuningTrainingJobName(other).has_value()) << other;
  }
}

TEST(TuningJobViewTest, DescribesATrialAsItsOwnTrainingJob) {
  auto request = ParseCreateTuningJob(kRequest);
  ASSERT_TRUE(request.ok()) << request.status();
  cairn::v1::Study study = TuningJobStudy(*request);
  study.set_name("studies/9");
  Trial trial = Job(2, Trial::SUCCEEDED, 0.25);
  trial.mutable_start_time()->set_seconds(1700000000);
  auto d = DescribeTuningTrainingJobJson(study, trial);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)["TrainingJobName"],
            TuningTrainingJobName("tune", "studies/9", 2));
  EXPECT_EQ((*d)["TuningJobArn"], TuningJobArn("tune"));
  EXPECT_EQ((*d)["TrainingJobStatus"], "Completed");
  EXPECT_EQ((*d)["HyperParameters"]["depth"], "2");
  EXPECT_EQ((*d)["HyperParameters"]["epochs"], "3");
  EXPECT_EQ((*d)["CreationTime"], 1700000000);
  EXPECT_NE((*d)["ModelArtifacts"]["S3ModelArtifacts"].get<std::string>().find(
                TuningTrainingJobName("tune", "studies/9", 2) +
                "/output/model.tar.gz"),
            std::string::npos);
  (*trial.mutable_labels())["sagemaker-warm-start"] = "parent";
  EXPECT_EQ(DescribeTuningTrainingJobJson(study, trial).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cairn::sagemaker
