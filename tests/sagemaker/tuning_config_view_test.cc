// DescribeHyperParameterTuningJob's echo of the request, rebuilt from the
// tuning job's study: the config and definition as requested (defaults
// filled in), times, FailureReason of a Failed job, and the summaries of
// ListHyperParameterTuningJobs and of each training job.
#include "sagemaker/tuning_config_view.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using nlohmann::json;

constexpr char kConfig[] = R"json({"Strategy": "Hyperband",
  "StrategyConfig": {"HyperbandStrategyConfig": {"MinResource": 2,
    "MaxResource": 9}},
  "HyperParameterTuningJobObjective": {"Type": "Maximize",
    "MetricName": "val:acc"},
  "ResourceLimits": {"MaxNumberOfTrainingJobs": 4,
    "MaxParallelTrainingJobs": 2},
  "ParameterRanges": {
    "IntegerParameterRanges": [{"Name": "depth", "MinValue": "1",
      "MaxValue": "9", "ScalingType": "Linear"}],
    "ContinuousParameterRanges": [
      {"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.5",
       "ScalingType": "Logarithmic"},
      {"Name": "mom", "MinValue": "0.5", "MaxValue": "0.99",
       "ScalingType": "ReverseLogarithmic"},
      {"Name": "wd", "MinValue": "0", "MaxValue": "1.5",
       "ScalingType": "Auto"}],
    "CategoricalParameterRanges": [{"Name": "opt",
      "Values": ["sgd", "adam"]}]},
  "TrainingJobEarlyStoppingType": "Off"})json";

constexpr char kDefinition[] = R"json({
  "StaticHyperParameters": {"epochs": "3"},
  "AlgorithmSpecification": {"TrainingImage": "localhost/t:1",
    "TrainingInputMode": "File",
    "MetricDefinitions": [{"Name": "val:acc", "Regex": "acc=([0-9.]+)"}]},
  "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
  "InputDataConfig": [{"ChannelName": "train", "DataSource": {
    "S3DataSource": {"S3DataType": "S3Prefix",
      "S3Uri": "s3://bkt/train/"}}}],
  "OutputDataConfig": {"S3OutputPath": "s3://bkt/out"},
  "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
    "VolumeSizeInGB": 1},
  "StoppingCondition": {"MaxRuntimeInSeconds": 600}})json";

Study TuningStudy(const json& config = json::parse(kConfig)) {
  const json body = {{"HyperParameterTuningJobName", "tune"},
                     {"HyperParameterTuningJobConfig", config},
                     {"TrainingJobDefinition", json::parse(kDefinition)},
                     {"Tags", {{{"Key", "team"}, {"Value", "ml"}}}}};
  auto request = ParseCreateTuningJob(body.dump());
  EXPECT_TRUE(request.ok()) << request.status();
  Study study = TuningJobStudy(*request);
  study.set_name("studies/3");
  study.mutable_create_time()->set_seconds(1000);
  return study;
}

TEST(TuningConfigViewTest, ConfigAndDefinitionAreEchoed) {
  const Study study = TuningStudy();
  EXPECT_EQ(TuningJobConfigJson(study, {}), json::parse(kConfig));
  EXPECT_EQ(TrainingJobDefinitionJson(study), json::parse(kDefinition));
}

TEST(TuningConfigViewTest, DefaultsAreFilledIn) {
  json config = json::parse(kConfig);
  config["Strategy"] = "Bayesian";
  config.erase("StrategyConfig");
  config.erase("TrainingJobEarlyStoppingType");
  config["ParameterRanges"]["IntegerParameterRanges"][0].erase("ScalingType");
  config["ParameterRanges"]["ContinuousParameterRanges"][0]["MinValue"] =
      "1e-4";
  const json echoed = TuningJobConfigJson(TuningStudy(config), {});
  EXPECT_EQ(echoed["Strategy"], "Bayesian");
  EXPECT_FALSE(echoed.contains("StrategyConfig"));
  EXPECT_EQ(echoed["TrainingJobEarlyStoppingType"], "Off");
  EXPECT_EQ(
      echoed["ParameterRanges"]["IntegerParameterRanges"][0]["ScalingType"],
      "Auto");
  EXPECT_EQ(
      echoed["ParameterRanges"]["ContinuousParameterRanges"][0]["MinValue"],
      "0.0001");
  config["Strategy"] = "Random";
  config["TrainingJobEarlyStoppingType"] = "Auto";
  EXPECT_EQ(TuningJobConfigJson(TuningStudy(config),
                                {})["TrainingJobEarlyStoppingType"],
            "Auto");
}

Trial Job(int id, Trial::State state, int64_t start, int64_t end) {
  Trial t;
  t.set_id(id);
  t.set_name("studies/3/trials/" + std::to_string(id));
  t.set_state(state);
  t.mutable_start_time()->set_seconds(start);
  if (end > 0) t.mutable_end_time()->set_seconds(end);
  auto* p = t.add_parameters();
  p->set_parameter_id("depth");
  p->mutable_value()->set_number_value(id);
  return t;
}

TEST(TuningConfigViewTest, AFailedJobSaysWhyAndWhen) {
  Study study = TuningStudy();
  study.set_state(Study::FAILED);
  study.set_inactive_reason("the first 3 trials all failed");
  std::vector<Trial> trials = {Job(1, Trial::FAILED, 1001, 1010),
                               Job(2, Trial::FAILED, 1002, 1020)};
  trials[1].set_infeasible_reason("job failed: exit code 1");
  const json d = DescribeTuningJobJson(study, trials);
  EXPECT_EQ(d["HyperParameterTuningJobStatus"], "Failed");
  EXPECT_EQ(d["FailureReason"],
            "the first 3 trials all failed; training job " +
                TuningTrainingJobName("tune", "studies/3", 2) +
                " failed: job failed: exit code 1");
  EXPECT_EQ(d["CreationTime"], 1000.0);
  EXPECT_EQ(d["LastModifiedTime"], 1020.0);
  EXPECT_EQ(d["HyperParameterTuningEndTime"], 1020.0);
  EXPECT_EQ(d["TrainingJobStatusCounters"]["NonRetryableError"], 2);
  EXPECT_FALSE(d.contains("BestTrainingJob"));
  EXPECT_EQ(d["TrainingJobDefinition"], json::parse(kDefinition));
  study.set_inactive_reason(std::string(5000, 'x'));
  EXPECT_EQ(DescribeTuningJobJson(study, trials)["FailureReason"]
                .get<std::string>()
                .size(),
            1024u);
}

TEST(TuningConfigViewTest, ARunningJobHasNoEndAndASummary) {
  const Study study = TuningStudy();
  const std::vector<Trial> trials = {Job(1, Trial::ACTIVE, 1001, 0)};
  const json d = DescribeTuningJobJson(study, trials);
  EXPECT_EQ(d["HyperParameterTuningJobStatus"], "InProgress");
  EXPECT_FALSE(d.contains("HyperParameterTuningEndTime"));
  EXPECT_FALSE(d.contains("FailureReason"));
  EXPECT_EQ(d["LastModifiedTime"], 1001.0);
  const json s = TuningJobSummaryJson(study, trials);
  EXPECT_EQ(s["Strategy"], "Hyperband");
  EXPECT_EQ(s["TrainingJobStatusCounters"]["InProgress"], 1);
  EXPECT_EQ(s["ResourceLimits"]["MaxNumberOfTrainingJobs"], 4);
}

}  // namespace
}  // namespace cairn::sagemaker
