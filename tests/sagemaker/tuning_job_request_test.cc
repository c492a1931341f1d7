// CreateHyperParameterTuningJob bodies as boto3 sends them become one
// study: ranges, strategy, objective, limits and early stopping map onto
// the StudySpec, and each bad value is refused naming field and value.
#include "sagemaker/tuning_job_request.h"

#include <map>
#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::MetricSpec;
using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;

constexpr char kBody[] = R"json({"HyperParameterTuningJobName": "xgb-tune",
 "HyperParameterTuningJobConfig": {"Strategy": "Bayesian",
   "HyperParameterTuningJobObjective": {"Type": "Minimize",
     "MetricName": "validation:loss"},
   "ResourceLimits": {"MaxNumberOfTrainingJobs": 6,
     "MaxParallelTrainingJobs": 2},
   "ParameterRanges": {
     "IntegerParameterRanges": [{"Name": "depth", "MinValue": "2",
       "MaxValue": "8", "ScalingType": "Auto"}],
     "ContinuousParameterRanges": [{"Name": "eta", "MinValue": "0.001",
       "MaxValue": "0.5", "ScalingType": "Logarithmic"}],
     "CategoricalParameterRanges": [{"Name": "booster",
       "Values": ["gbtree", "dart"]}]},
   "TrainingJobEarlyStoppingType": "Off"},
 "TrainingJobDefinition": {
   "StaticHyperParameters": {"epochs": "3"},
   "AlgorithmSpecification": {"TrainingImage": "localhost/my-train:latest",
     "TrainingInputMode": "File",
     "MetricDefinitions": [{"Name": "validation:loss",
       "Regex": "val_loss=([0-9\\.]+)"}]},
   "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
   "OutputDataConfig": {"S3OutputPath": "s3://my-bucket/output"},
   "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
     "VolumeSizeInGB": 10},
   "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})json";

std::string With(absl::string_view from, absl::string_view to) {
  std::string body = absl::StrReplaceAll(kBody, {{from, to}});
  EXPECT_NE(body, kBody) << from;
  return body;
}

TEST(TuningJobRequestTest, MapsToOneStudy) {
  auto r = ParseCreateTuningJob(kBody);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "xgb-tune");
  const StudySpec& spec = r->spec;
  EXPECT_EQ(spec.algorithm(), StudySpec::GP_BANDIT);
  EXPECT_EQ(spec.max_trials(), 6);
  EXPECT_EQ(spec.max_parallel_trials(), 2);
  EXPECT_FALSE(spec.has_early_stopping());
  ASSERT_EQ(spec.metrics_size(), 1);
  EXPECT_EQ(spec.metrics(0).metric_id(), "validation_loss");
  EXPECT_EQ(spec.metrics(0).goal(), MetricSpec::MINIMIZE);
  EXPECT_EQ(r->objective_metric_name, "validation:loss");
  ASSERT_EQ(spec.parameters_size(), 3);
  EXPECT_EQ(spec.parameters(0).parameter_id(), "depth");
  EXPECT_EQ(spec.parameters(0).type(), ParameterSpec::INTEGER);
  EXPECT_EQ(spec.parameters(0).min_value(), 2);
  EXPECT_EQ(spec.parameters(0).max_value(), 8);
  EXPECT_EQ(spec.parameters(0).scale_type(),
            ParameterSpec::SCALE_TYPE_UNSPECIFIED);  // Auto: linear
  EXPECT_EQ(spec.parameters(1).type(), ParameterSpec::DOUBLE);
  EXPECT_EQ(spec.parameters(1).scale_type(), ParameterSpec::UNIT_LOG_SCALE);
  EXPECT_EQ(spec.parameters(2).type(), ParameterSpec::CATEGORICAL);
  EXPECT_EQ(spec.parameters(2).categorical_values_size(), 2);
  // The definition is a training job of the same validated shape.
  EXPECT_EQ(r->training.training_job_name(), "xgb-tune");
  EXPECT_EQ(r->training.hyper_parameters().at("epochs"), "3");
  EXPECT_EQ(r->training.stopping_condition().max_runtime_in_seconds(), 600);
}

TEST(TuningJobRequestTest, StrategiesAndEarlyStopping) {
  auto random = ParseCreateTuningJob(With("\"Bayesian\"", "\"Random\""));
  ASSERT_TRUE(random.ok()) << random.status();
  EXPECT_EQ(random->spec.algorithm(), StudySpec::RANDOM_SEARCH);
  auto grid = ParseCreateTuningJob(With("\"Bayesian\"", "\"Grid\""));
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->spec.algorithm(), StudySpec::GRID_SEARCH);
  auto hyperband = ParseCreateTuningJob(
      With("\"Strategy\": \"Bayesian\"",
           "\"Strategy\": \"Hyperband\", \"StrategyConfig\": "
           "{\"HyperbandStrategyConfig\": {\"MinResource\": 2, "
           "\"MaxResource\": 30}}"));
  ASSERT_TRUE(hyperband.ok()) << hyperband.status();
  EXPECT_EQ(hyperband->spec.algorithm(), StudySpec::RANDOM_SEARCH);
  EXPECT_EQ(hyperband->spec.early_stopping().asha().min_resource(), 2);
  EXPECT_EQ(hyperband->spec.early_stopping().asha().max_resource(), 30);
  auto median = ParseCreateTuningJob(With("\"Off\"", "\"Auto\""));
  ASSERT_TRUE(median.ok()) << median.status();
  EXPECT_TRUE(median->spec.early_stopping().has_median());
  auto maximize = ParseCreateTuningJob(With("\"Minimize\"", "\"Maximize\""));
  ASSERT_TRUE(maximize.ok());
  EXPECT_EQ(maximize->spec.metrics(0).goal(), MetricSpec::MAXIMIZE);
}

// Each bad body is refused with InvalidArgument naming the field and the
// value, in under 1 KB.
TEST(TuningJobRequestTest, RefusesBadValuesNamingFieldAndValue) {
  const struct {
    std::string body;
    std::string field;
    std::string value;
  } kCases[] = {
      {With("\"xgb-tune\"", "\"bad_name\""), "HyperParameterTuningJobName",
       "bad_name"},
      {With("\"xgb-tune\"", "\"a23456789012345678901234567890123\""),
       "HyperParameterTuningJobName", "a2345"},
      {With("\"MaxValue\": \"8\"", "\"MaxValue\": \"1\""), "MinValue", "2"},
      {With("\"0.001\"", "\"0\""), "MinValue", "0"},
      {With("\"MinValue\": \"2\"", "\"MinValue\": \"2.5\""),
       "IntegerParameterRanges", "depth"},
      {With("\"0.5\"", "\"lots\""), "MaxValue", "lots"},
      {With("\"Auto\"", "\"Cubic\""), "ScalingType", "Cubic"},
      {With("\"Bayesian\"", "\"Genetic\""), "Strategy", "Genetic"},
      {With("\"MaxNumberOfTrainingJobs\": 6", "\"MaxNumberOfTrainingJobs\": 0"),
       "MaxNumberOfTrainingJobs", "0"},
      {With("\"MaxParallelTrainingJobs\": 2",
            "\"MaxParallelTrainingJobs\": -1"),
       "MaxParallelTrainingJobs", "-1"},
      {With("\"MetricName\": \"validation:loss\"", "\"MetricName\": \"acc\""),
       "MetricName", "acc"},
      {With("\"Minimize\"", "\"Lowest\""), "Type", "Lowest"},
      {With("\"Name\": \"eta\"", "\"Name\": \"depth\""), "Name", "depth"},
      {With("\"Name\": \"eta\"", "\"Name\": \"epochs\""), "Name", "epochs"},
      {With("[\"gbtree\", \"dart\"]", "[]"), "Values", "booster"},
      {With("{\"HyperParameterTuningJobName\"",
            "{\"WarmStartConfig\": {}, \"HyperParameterTuningJobName\""),
       "WarmStartConfig", ""},
      {With("\"ml.m5.large\"", "\"ml.x9.huge\""), "InstanceType", "ml.x9.huge"},
      {With("\"MinValue\": \"2\"", "\"MinValue\": 2"),
       "IntegerParameterRanges.MinValue", ""},
      {"{not json", "request body", ""},
  };
  for (const auto& c : kCases) {
    auto r = ParseCreateTuningJob(c.body);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find(c.value), std::string::npos)
        << r.status();
    EXPECT_LT(r.status().message().size(), 1024u);
  }
}

TEST(TuningJobRequestTest, TrainingJobNamesAreStableAndDistinct) {
  const std::string name = TuningTrainingJobName("xgb-tune", "studies/7", 3);
  EXPECT_TRUE(RE2::FullMatch(name, "xgb-tune-003-[0-9a-f]{8}")) << name;
  EXPECT_EQ(name, TuningTrainingJobName("xgb-tune", "studies/7", 3));
  EXPECT_NE(name, TuningTrainingJobName("xgb-tune", "studies/8", 3));
  EXPECT_TRUE(RE2::FullMatch(TuningTrainingJobName("t", "studies/7", 1234),
                             "t-1234-[0-9a-f]{8}"));
}

TEST(TuningJobRequestTest, TrialHyperParametersAreStrings) {
  auto r = ParseCreateTuningJob(kBody);
  ASSERT_TRUE(r.ok()) << r.status();
  cairn::v1::Trial trial;
  auto add = [&trial](const char* id) {
    auto* p = trial.add_parameters();
    p->set_parameter_id(id);
    return p->mutable_value();
  };
  add("depth")->set_number_value(5);
  add("eta")->set_number_value(0.1);
  add("booster")->set_string_value("dart");
  auto hp = TrialHyperParameters(r->training.hyper_parameters(), trial);
  ASSERT_TRUE(hp.ok()) << hp.status();
  const std::map<std::string, std::string> want = {
      {"epochs", "3"}, {"depth", "5"}, {"eta", "0.1"}, {"booster", "dart"}};
  EXPECT_EQ(*hp, want);
  add("broken");
  hp = TrialHyperParameters(r->training.hyper_parameters(), trial);
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("broken"), std::string::npos);
}

}  // namespace
}  // namespace cairn::sagemaker
