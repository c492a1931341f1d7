// WarmStartConfig: parsing and validation, which parents' training jobs
// become prior trials of the new tuning job's study, the rules for each
// WarmStartType, and Describe's WarmStartConfig from the study's labels.
#include "sagemaker/warm_start.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::ParameterSpec;
using cairn::v1::Study;
using cairn::v1::Trial;
using nlohmann::json;

json Config(const std::string& type, json parents) {
  json list = json::array();
  for (const auto& p : parents) {
    list.push_back({{"HyperParameterTuningJobName", p}});
  }
  return {{"WarmStartType", type}, {"ParentHyperParameterTuningJobs", list}};
}

// A tuning job's study tuning `epochs` in [lo, hi] (and `lr` if given),
// with static hyperparameters `statics` and objective validation:loss.
Study TuningStudy(const std::string& name, double lo, double hi,
                  std::map<std::string, std::string> statics = {},
                  const std::string& image = "img:1") {
  Study s;
  s.set_name("studies/" + name);
  s.set_display_name(name);
  s.set_state(Study::COMPLETED);
  auto* spec = s.mutable_spec();
  (*spec->mutable_labels())["sagemaker"] = kTuningJobLabel;
  auto* m = spec->add_metrics();
  m->set_metric_id("validation_loss");
  m->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  auto* p = spec->add_parameters();
  p->set_parameter_id("epochs");
  p->set_type(ParameterSpec::INTEGER);
  p->set_min_value(lo);
  p->set_max_value(hi);
  auto* job = spec->mutable_sagemaker_training_job();
  job->mutable_algorithm_specification()->set_training_image(image);
  job->mutable_hyper_parameters()->insert(statics.begin(), statics.end());
  return s;
}

Trial Job(int id, double epochs, Trial::State state, double loss) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  auto* p = t.add_parameters();
  p->set_parameter_id("epochs");
  p->mutable_value()->set_number_value(epochs);
  if (loss >= 0) {
    auto* m = t.mutable_final_measurement()->add_metrics();
    m->set_metric_id("validation_loss");
    m->set_value(loss);
  }
  return t;
}

WarmStartParent Parent(const std::string& name) {
  return {TuningStudy(name, 1, 9),
          {Job(1, 5, Trial::SUCCEEDED, 0.2), Job(2, 1, Trial::SUCCEEDED, 1.0),
           Job(3, 8, Trial::FAILED, -1), Job(4, 9, Trial::SUCCEEDED, -1),
           Job(5, 9, Trial::SUCCEEDED, 0.111)}};
}

TEST(ParseWarmStartConfig, AcceptsBothTypesAndUpToFiveParents) {
  auto c = ParseWarmStartConfig(
      Config("TransferLearning", {"a", "b", "c", "d", "e"}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->type, "TransferLearning");
  EXPECT_EQ(c->parents, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_TRUE(
      ParseWarmStartConfig(Config("IdenticalDataAndAlgorithm", {"a"})).ok());
}

TEST(ParseWarmStartConfig, RefusesNamingFieldAndValue) {
  struct Case {
    json config;
    std::string words;
  } cases[] = {
      {Config("Warm", {"a"}), "WarmStartType 'Warm'"},
      {Config("TransferLearning", json::array()), "ParentHyperParameter"},
      {Config("TransferLearning", {"a", "b", "c", "d", "e", "f"}), "'6'"},
      {Config("TransferLearning", {"a", "a"}), "'a'"},
      {Config("TransferLearning", {"bad_name!"}), "'bad_name!'"},
      {json{{"WarmStartType", "TransferLearning"}, {"Extra", 1}}, "Extra"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseWarmStartConfig(c.config);
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << c.config.dump();
    EXPECT_NE(parsed.status().message().find(c.words), std::string::npos)
        << parsed.status().message();
  }
}

TEST(WarmStartTrials, CopiesCompletedJobsWithAnObjective) {
  auto config =
      ParseWarmStartConfig(Config("IdenticalDataAndAlgorithm", {"p"}));
  ASSERT_TRUE(config.ok());
  auto prior =
      WarmStartTrials(*config, TuningStudy("child", 1, 9), {Parent("p")});
  ASSERT_TRUE(prior.ok()) << prior.status();
  ASSERT_EQ(prior->size(), 3u);  // not the failed one, nor the one without
  EXPECT_EQ((*prior)[0].parameters(0).value().number_value(), 5);
  EXPECT_EQ((*prior)[0].final_measurement().metrics(0).value(), 0.2);
  EXPECT_EQ((*prior)[2].final_measurement().metrics(0).value(), 0.111);
  for (const Trial& t : *prior) {
    EXPECT_TRUE(IsWarmStartTrial(t));
    EXPECT_EQ(t.labels().at(kWarmStartTrialLabel), "p");
    EXPECT_FALSE(t.has_start_time());
  }
}

TEST(WarmStartTrials, TransferLearningKeepsOnlyValuesInTheNewRanges) {
  auto config = ParseWarmStartConfig(Config("TransferLearning", {"p"}));
  ASSERT_TRUE(config.ok());
  auto prior =
      WarmStartTrials(*config, TuningStudy("child", 4, 20), {Parent("p")});
  ASSERT_TRUE(prior.ok()) << prior.status();
  ASSERT_EQ(prior->size(), 2u);  // epochs 5 and 9; 1 is outside [4, 20]
  EXPECT_EQ((*prior)[1].parameters(0).value().number_value(), 9);
}

TEST(WarmStartTrials, AStaticHyperparameterMayBecomeTunable) {
  WarmStartParent parent = Parent("p");
  (*parent.study.mutable_spec()
        ->mutable_sagemaker_training_job()
        ->mutable_hyper_parameters())["lr"] = "0.5";
  Study child = TuningStudy("child", 1, 9);
  auto* lr = child.mutable_spec()->add_parameters();
  lr->set_parameter_id("lr");
  lr->set_type(ParameterSpec::DOUBLE);
  lr->set_min_value(0.1);
  lr->set_max_value(1);
  auto config =
      ParseWarmStartConfig(Config("IdenticalDataAndAlgorithm", {"p"}));
  auto prior = WarmStartTrials(*config, child, {parent});
  ASSERT_TRUE(prior.ok()) << prior.status();
  ASSERT_EQ(prior->size(), 3u);
  EXPECT_EQ((*prior)[0].parameters(1).parameter_id(), "lr");
  EXPECT_EQ((*prior)[0].parameters(1).value().number_value(), 0.5);
}

TEST(WarmStartTrials, RefusesParentsThatBreakTheRules) {
  auto identical =
      ParseWarmStartConfig(Config("IdenticalDataAndAlgorithm", {"p"}));
  auto transfer = ParseWarmStartConfig(Config("TransferLearning", {"p"}));
  WarmStartParent running = Parent("p");
  running.study.set_state(Study::ACTIVE);
  WarmStartParent other_metric = Parent("p");
  other_metric.study.mutable_spec()->mutable_metrics(0)->set_metric_id("acc");
  const Study child = TuningStudy("child", 1, 9);
  const Study new_image = TuningStudy("child", 1, 9, {}, "img:2");
  const Study more_statics = TuningStudy("child", 1, 9, {{"sleep", "0"}});
  struct Case {
    const WarmStartConfig& config;
    const Study& child;
    const WarmStartParent& parent;
    std::string words;
  } cases[] = {
      {*transfer, child, running, "InProgress"},
      {*transfer, child, other_metric, "HyperParameterTuningJobObjective"},
      {*identical, new_image, Parent("p"), "TrainingImage"},
      {*identical, more_statics, Parent("p"), "static plus tunable"},
  };
  for (const Case& c : cases) {
    auto prior = WarmStartTrials(c.config, c.child, {c.parent});
    ASSERT_EQ(prior.status().code(), absl::StatusCode::kInvalidArgument)
        << c.words;
    EXPECT_NE(prior.status().message().find(c.words), std::string::npos)
        << prior.status().message();
    EXPECT_NE(prior.status().message().find("'p'"), std::string::npos);
  }
  // TransferLearning allows another image and statics.
  EXPECT_TRUE(WarmStartTrials(*transfer, new_image, {Parent("p")}).ok());
  EXPECT_TRUE(WarmStartTrials(*transfer, more_statics, {Parent("p")}).ok());
}

TEST(WarmStartConfigJson, RoundTripsThroughTheStudyLabels) {
  Study study = TuningStudy("child", 1, 9);
  EXPECT_TRUE(WarmStartConfigJson(study).is_null());
  auto config = ParseWarmStartConfig(Config("TransferLearning", {"a", "b"}));
  SetWarmStartLabels(*config, &study);
  EXPECT_EQ(WarmStartConfigJson(study), Config("TransferLearning", {"a", "b"}));
}

TEST(WarmStartTrials, PriorTrialsAreNotTheJobsOwn) {
  std::vector<Trial> trials = {Job(1, 9, Trial::SUCCEEDED, 0.1),
                               Job(2, 5, Trial::SUCCEEDED, 0.2)};
  (*trials[0].mutable_labels())[kWarmStartTrialLabel] = "p";
  Study study = TuningStudy("child", 1, 9);
  study.mutable_spec()->set_max_trials(5);  // 4 own + 1 prior
  const TuningObjective objective{"validation:loss", true};
  json counters = TuningCounters(trials, objective);
  EXPECT_EQ(counters["TrainingJobStatusCounters"]["Completed"], 1);
  EXPECT_EQ(counters["ObjectiveStatusCounters"]["Succeeded"], 1);
  (*study.mutable_spec()->mutable_labels())[kObjectiveLabel] =
      "validation:loss";
  json best = BestTrainingJob(study, trials);
  EXPECT_EQ(best["TunedHyperParameters"]["epochs"], "5");
  EXPECT_EQ(ResourceLimitsJson(study, trials)["MaxNumberOfTrainingJobs"], 4);
}

}  // namespace
}  // namespace cairn::sagemaker
