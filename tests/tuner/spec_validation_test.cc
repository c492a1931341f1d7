// Tests of ValidateStudySpec, ValidateTrialParameters and the measurement
// checks: every bad input gets InvalidArgument naming its field and value.
#include "tuner/spec_validation.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

#include "cairn/v1/study.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn::tuner {
namespace {

using cairn::v1::Measurement;
using cairn::v1::Parameter;
using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// testing::MixedSpaceSpec() (lr, layers, opt -> momentum | beta1, batch)
// with RANDOM_SEARCH.
StudySpec ValidSpec() {
  StudySpec spec = testing::MixedSpaceSpec();
  spec.set_algorithm(StudySpec::RANDOM_SEARCH);
  return spec;
}

// Expects InvalidArgument whose message contains every fragment.
void ExpectInvalid(const absl::Status& status,
                   std::initializer_list<std::string> fragments) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& f : fragments) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(f));
  }
}

ParameterSpec* Param(StudySpec* spec, int i) {
  return spec->mutable_parameters(i);
}

ParameterSpec* Momentum(StudySpec* spec) {
  return spec->mutable_parameters(2)
      ->mutable_conditional_parameter_specs(0)
      ->mutable_parameter_spec();
}

TEST(ValidateStudySpecTest, ValidSpecPasses) {
  EXPECT_TRUE(ValidateStudySpec(ValidSpec()).ok());
}

TEST(ValidateStudySpecTest, AnySeedIsFine) {
  StudySpec spec = ValidSpec();
  spec.set_seed(-12345);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
}

TEST(ValidateStudySpecTest, GridResolutionOneIsFine) {
  StudySpec spec = ValidSpec();
  spec.set_algorithm(StudySpec::GRID_SEARCH);
  Param(&spec, 0)->set_grid_resolution(1);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
}

TEST(ValidateStudySpecTest, SingleValuedRangesAreFine) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_min_value(0.01);
  Param(&spec, 0)->set_max_value(0.01);
  Param(&spec, 1)->set_min_value(3);
  Param(&spec, 1)->set_max_value(3);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
}

TEST(ValidateStudySpecTest, LimitsAndJobTemplatePass) {
  StudySpec spec = ValidSpec();
  spec.set_max_trials(50);
  spec.set_max_parallel_trials(4);
  spec.set_max_failed_trials(3);
  spec.mutable_job_template()->add_command("python3");
  spec.mutable_job_template()->set_gpus_per_trial(1);
  spec.mutable_job_template()->set_max_restarts(2);
  spec.mutable_early_stopping()->mutable_asha()->set_min_resource(1);
  spec.mutable_early_stopping()->mutable_asha()->set_reduction_factor(3);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
}

TEST(ValidateStudySpecTest, EmptySearchSpace) {
  StudySpec spec = ValidSpec();
  spec.clear_parameters();
  ExpectInvalid(ValidateStudySpec(spec), {"parameters", "empty"});
}

TEST(ValidateStudySpecTest, EmptyParameterId) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->clear_parameter_id();
  ExpectInvalid(ValidateStudySpec(spec), {"parameters[1]", "parameter_id"});
}

TEST(ValidateStudySpecTest, ParameterIdWithEqualsSign) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_parameter_id("a=b");
  ExpectInvalid(ValidateStudySpec(spec), {"parameters[1]", "\"a=b\""});
}

TEST(ValidateStudySpecTest, DuplicateParameterId) {
  StudySpec spec = ValidSpec();
  Param(&spec, 3)->set_parameter_id("lr");
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[3] (lr)", "duplicate", "parameters[0]"});
}

TEST(ValidateStudySpecTest, DuplicateIdBetweenChildAndTopLevel) {
  StudySpec spec = ValidSpec();
  Momentum(&spec)->set_parameter_id("batch");
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[3] (batch)", "duplicate", "\"batch\"",
                 "parameters[2].conditional_parameter_specs[0]"});
}

TEST(ValidateStudySpecTest, DuplicateIdBetweenTwoChildren) {
  StudySpec spec = ValidSpec();
  spec.mutable_parameters(2)
      ->mutable_conditional_parameter_specs(1)
      ->mutable_parameter_spec()
      ->set_parameter_id("momentum");
  ExpectInvalid(
      ValidateStudySpec(spec),
      {"parameters[2].conditional_parameter_specs[1].parameter_spec (momentum)",
       "duplicate"});
}

TEST(ValidateStudySpecTest, TypeUnspecified) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_type(ParameterSpec::TYPE_UNSPECIFIED);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[1] (layers)", "TYPE_UNSPECIFIED"});
}

TEST(ValidateStudySpecTest, UnknownTypeValue) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_type(static_cast<ParameterSpec::Type>(17));
  ExpectInvalid(ValidateStudySpec(spec), {"parameters[1] (layers)", "17"});
}

TEST(ValidateStudySpecTest, UnknownScaleValue) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_scale_type(static_cast<ParameterSpec::ScaleType>(9));
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "scale_type 9"});
}

TEST(ValidateStudySpecTest, MinGreaterThanMax) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_min_value(9);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[1] (layers)", "min_value 9", "max_value 8"});
}

TEST(ValidateStudySpecTest, NaNMinValue) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_min_value(kNaN);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "min_value nan", "finite"});
}

TEST(ValidateStudySpecTest, InfiniteMaxValue) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_max_value(kInf);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "max_value inf", "finite"});
}

TEST(ValidateStudySpecTest, RangeTooWide) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_scale_type(ParameterSpec::UNIT_LINEAR_SCALE);
  Param(&spec, 0)->set_min_value(-1e308);
  Param(&spec, 0)->set_max_value(1e308);
  ExpectInvalid(ValidateStudySpec(spec), {"parameters[0] (lr)", "too wide"});
}

TEST(ValidateStudySpecTest, IntegerBoundNotIntegral) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_max_value(7.5);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[1] (layers)", "max_value 7.5", "integer"});
}

TEST(ValidateStudySpecTest, IntegerBoundTooLarge) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_max_value(1e17);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[1] (layers)", "max_value 1e+17"});
}

TEST(ValidateStudySpecTest, LogScaleNeedsPositiveMin) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_min_value(0);
  const absl::Status status = ValidateStudySpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "parameters[0] (lr): min_value 0 must be > 0 for UNIT_LOG_SCALE");
}

TEST(ValidateStudySpecTest, ReverseLogScaleNeedsPositiveMin) {
  StudySpec spec = ValidSpec();
  Param(&spec, 1)->set_scale_type(ParameterSpec::UNIT_REVERSE_LOG_SCALE);
  Param(&spec, 1)->set_min_value(-2);
  ExpectInvalid(
      ValidateStudySpec(spec),
      {"parameters[1] (layers)", "min_value -2", "UNIT_REVERSE_LOG_SCALE"});
}

TEST(ValidateStudySpecTest, DiscreteLogScaleNeedsPositiveValues) {
  StudySpec spec = ValidSpec();
  Param(&spec, 3)->set_scale_type(ParameterSpec::UNIT_LOG_SCALE);
  Param(&spec, 3)->set_discrete_values(0, -16);
  ExpectInvalid(
      ValidateStudySpec(spec),
      {"parameters[3] (batch)", "discrete_values[0] -16", "UNIT_LOG_SCALE"});
}

TEST(ValidateStudySpecTest, NegativeGridResolution) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_grid_resolution(-3);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "grid_resolution -3"});
}

TEST(ValidateStudySpecTest, HugeGridResolution) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->set_grid_resolution(2000000000);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "grid_resolution 2000000000"});
}

TEST(ValidateStudySpecTest, DoubleWithCategoricalValues) {
  StudySpec spec = ValidSpec();
  Param(&spec, 0)->add_categorical_values("x");
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[0] (lr)", "categorical_values", "\"x\""});
}

TEST(ValidateStudySpecTest, CategoricalWithoutValues) {
  StudySpec spec = ValidSpec();
  Param(&spec, 2)->clear_categorical_values();
  Param(&spec, 2)->clear_conditional_parameter_specs();
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2] (opt)", "categorical_values is empty"});
}

TEST(ValidateStudySpecTest, CategoricalDuplicateValue) {
  StudySpec spec = ValidSpec();
  Param(&spec, 2)->add_categorical_values("sgd");
  ExpectInvalid(
      ValidateStudySpec(spec),
      {"parameters[2] (opt)", "categorical_values[2]", "\"sgd\"", "duplicate"});
}

TEST(ValidateStudySpecTest, CategoricalEmptyString) {
  StudySpec spec = ValidSpec();
  Param(&spec, 2)->add_categorical_values("");
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2] (opt)", "categorical_values[2] is empty"});
}

TEST(ValidateStudySpecTest, CategoricalWithScale) {
  StudySpec spec = ValidSpec();
  Param(&spec, 2)->set_scale_type(ParameterSpec::UNIT_LOG_SCALE);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2] (opt)", "UNIT_LOG_SCALE", "CATEGORICAL"});
}

TEST(ValidateStudySpecTest, CategoricalWithBounds) {
  StudySpec spec = ValidSpec();
  Param(&spec, 2)->set_max_value(4);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2] (opt)", "max_value", "4"});
}

TEST(ValidateStudySpecTest, DiscreteWithoutValues) {
  StudySpec spec = ValidSpec();
  Param(&spec, 3)->clear_discrete_values();
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[3] (batch)", "discrete_values is empty"});
}

TEST(ValidateStudySpecTest, DiscreteNotStrictlyIncreasing) {
  StudySpec spec = ValidSpec();
  Param(&spec, 3)->set_discrete_values(2, 32);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[3] (batch)", "discrete_values[2] 32",
                 "strictly increasing"});
}

TEST(ValidateStudySpecTest, DiscreteNaN) {
  StudySpec spec = ValidSpec();
  Param(&spec, 3)->set_discrete_values(1, kNaN);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[3] (batch)", "discrete_values[1] nan"});
}

TEST(ValidateStudySpecTest, InvalidChildNamesItsPath) {
  StudySpec spec = ValidSpec();
  Momentum(&spec)->set_min_value(2);
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2].conditional_parameter_specs[0].parameter_spec "
                 "(momentum)",
                 "min_value 2"});
}

TEST(ValidateStudySpecTest, ConditionWrongValueKind) {
  StudySpec spec = ValidSpec();
  spec.mutable_parameters(2)
      ->mutable_conditional_parameter_specs(0)
      ->add_parent_int_values(1);
  ExpectInvalid(ValidateStudySpec(spec),
                {"conditional_parameter_specs[0] (momentum)",
                 "parent_categorical_values", "parent_int_values"});
}

TEST(ValidateStudySpecTest, ConditionEmptyValues) {
  StudySpec spec = ValidSpec();
  spec.mutable_parameters(2)
      ->mutable_conditional_parameter_specs(0)
      ->clear_parent_categorical_values();
  ExpectInvalid(ValidateStudySpec(spec),
                {"parameters[2].conditional_parameter_specs[0] (momentum)",
                 "parent_categorical_values is empty"});
}

TEST(ValidateStudySpecTest, ConditionUnknownCategory) {
  StudySpec spec = ValidSpec();
  spec.mutable_parameters(2)
      ->mutable_conditional_parameter_specs(0)
      ->set_parent_categorical_values(0, "rmsprop");
  ExpectInvalid(ValidateStudySpec(spec),
                {"conditional_parameter_specs[0] (momentum)", "\"rmsprop\"",
                 "parent parameters[2] (opt)"});
}

TEST(ValidateStudySpecTest, ConditionIntOutsideParentRange) {
  StudySpec spec = ValidSpec();
  auto* c = Param(&spec, 1)->add_conditional_parameter_specs();
  c->mutable_parameter_spec()->set_parameter_id("width");
  c->mutable_parameter_spec()->set_type(ParameterSpec::INTEGER);
  c->mutable_parameter_spec()->set_min_value(8);
  c->mutable_parameter_spec()->set_max_value(64);
  c->add_parent_int_values(2);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
  c->add_parent_int_values(12);
  ExpectInvalid(ValidateStudySpec(spec),
                {"(width)", "parent_int_values[1] 12", "[1, 8]"});
}

TEST(ValidateStudySpecTest, ConditionUnknownDiscreteValue) {
  StudySpec spec = ValidSpec();
  auto* c = Param(&spec, 3)->add_conditional_parameter_specs();
  c->mutable_parameter_spec()->set_parameter_id("accum");
  c->mutable_parameter_spec()->set_type(ParameterSpec::INTEGER);
  c->mutable_parameter_spec()->set_min_value(1);
  c->mutable_parameter_spec()->set_max_value(4);
  c->add_parent_discrete_values(64);
  EXPECT_TRUE(ValidateStudySpec(spec).ok());
  c->add_parent_discrete_values(48);
  ExpectInvalid(ValidateStudySpec(spec),
                {"(accum)", "parent_discrete_values[1] 48",
                 "parent parameters[3] (batch)"});
}

TEST(ValidateStudySpecTest, ConditionOnDoubleParent) {
  StudySpec spec = ValidSpec();
  auto* c = Param(&spec, 0)->add_conditional_parameter_specs();
  c->mutable_parameter_spec()->set_parameter_id("warmup");
  c->mutable_parameter_spec()->set_type(ParameterSpec::INTEGER);
  c->mutable_parameter_spec()->set_max_value(10);
  c->add_parent_discrete_values(0.01);
  ExpectInvalid(ValidateStudySpec(spec),
                {"(warmup)", "parent parameters[0] (lr) is DOUBLE"});
}

TEST(ValidateStudySpecTest, NoMetrics) {
  StudySpec spec = ValidSpec();
  spec.clear_metrics();
  ExpectInvalid(ValidateStudySpec(spec), {"metrics", "empty"});
}

TEST(ValidateStudySpecTest, EmptyMetricId) {
  StudySpec spec = ValidSpec();
  spec.mutable_metrics(0)->clear_metric_id();
  ExpectInvalid(ValidateStudySpec(spec), {"metrics[0]", "metric_id is empty"});
}

TEST(ValidateStudySpecTest, DuplicateMetricId) {
  StudySpec spec = ValidSpec();
  *spec.add_metrics() = spec.metrics(0);
  ExpectInvalid(ValidateStudySpec(spec),
                {"metrics[1] (loss)", "duplicate", "\"loss\""});
}

TEST(ValidateStudySpecTest, GoalUnspecified) {
  StudySpec spec = ValidSpec();
  spec.mutable_metrics(0)->set_goal(cairn::v1::MetricSpec::GOAL_UNSPECIFIED);
  ExpectInvalid(ValidateStudySpec(spec),
                {"metrics[0] (loss)", "GOAL_UNSPECIFIED"});
}

TEST(ValidateStudySpecTest, SafetyThresholdNaN) {
  StudySpec spec = ValidSpec();
  spec.mutable_metrics(0)->set_safety_threshold(kNaN);
  ExpectInvalid(ValidateStudySpec(spec),
                {"metrics[0] (loss)", "safety_threshold nan"});
}

TEST(ValidateStudySpecTest, UnknownAlgorithm) {
  StudySpec spec = ValidSpec();
  spec.set_algorithm(static_cast<StudySpec::Algorithm>(42));
  ExpectInvalid(ValidateStudySpec(spec), {"algorithm", "42"});
}

TEST(ValidateStudySpecTest, NegativeMaxTrials) {
  StudySpec spec = ValidSpec();
  spec.set_max_trials(-1);
  ExpectInvalid(ValidateStudySpec(spec), {"max_trials", "-1"});
}

TEST(ValidateStudySpecTest, NegativeMaxParallelTrials) {
  StudySpec spec = ValidSpec();
  spec.set_max_parallel_trials(-2);
  ExpectInvalid(ValidateStudySpec(spec), {"max_parallel_trials", "-2"});
}

TEST(ValidateStudySpecTest, NegativeMaxFailedTrials) {
  StudySpec spec = ValidSpec();
  spec.set_max_failed_trials(-3);
  ExpectInvalid(ValidateStudySpec(spec), {"max_failed_trials", "-3"});
}

TEST(ValidateStudySpecTest, NegativeGpusPerTrial) {
  StudySpec spec = ValidSpec();
  spec.mutable_job_template()->add_command("train");
  spec.mutable_job_template()->set_gpus_per_trial(-1);
  ExpectInvalid(ValidateStudySpec(spec), {"job_template.gpus_per_trial", "-1"});
}

TEST(ValidateStudySpecTest, NegativeMaxRestarts) {
  StudySpec spec = ValidSpec();
  spec.mutable_job_template()->add_command("train");
  spec.mutable_job_template()->set_max_restarts(-4);
  ExpectInvalid(ValidateStudySpec(spec), {"job_template.max_restarts", "-4"});
}

TEST(ValidateStudySpecTest, JobTemplateWithoutCommand) {
  StudySpec spec = ValidSpec();
  spec.mutable_job_template()->set_gpus_per_trial(1);
  ExpectInvalid(ValidateStudySpec(spec), {"job_template.command", "empty"});
}

// A template with replicas described in text format, merged into ValidSpec.
StudySpec WithReplicas(const std::string& replicas) {
  StudySpec spec = ValidSpec();
  spec.mutable_job_template()->add_command("train");
  cairn::v1::TrialJobTemplate extra;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(replicas, &extra));
  spec.mutable_job_template()->MergeFrom(extra);
  return spec;
}

TEST(ValidateStudySpecTest, ReplicasMasterAndWorkersAreValid) {
  EXPECT_TRUE(ValidateStudySpec(WithReplicas(R"pb(
                replicas { type: MASTER count: 1 gpus_per_replica: 1 }
                replicas { type: WORKER count: 2 }
                replicas { type: PARAMETER_SERVER count: 0 }
                replicas { type: EVALUATOR count: 1 }
              )pb"))
                  .ok());
}

TEST(ValidateStudySpecTest, ReplicasNeedExactlyOneMasterOfCountOne) {
  ExpectInvalid(
      ValidateStudySpec(WithReplicas("replicas { type: WORKER count: 2 }")),
      {"job_template.replicas", "no MASTER"});
  ExpectInvalid(
      ValidateStudySpec(WithReplicas("replicas { type: MASTER count: 2 }")),
      {"job_template.replicas[0].count", "2", "exactly one master"});
  ExpectInvalid(
      ValidateStudySpec(WithReplicas("replicas { type: MASTER count: 1 } "
                                     "replicas { type: MASTER count: 1 }")),
      {"job_template.replicas[1].type", "MASTER", "twice"});
}

TEST(ValidateStudySpecTest, ReplicaCountsAndGpusAreBounded) {
  ExpectInvalid(
      ValidateStudySpec(WithReplicas("replicas { type: MASTER count: 1 } "
                                     "replicas { type: WORKER count: -1 }")),
      {"job_template.replicas[1].count", "-1"});
  ExpectInvalid(
      ValidateStudySpec(WithReplicas("replicas { type: MASTER count: 1 } "
                                     "replicas { type: WORKER count: 65 }")),
      {"job_template.replicas[1].count", "65", "64"});
  ExpectInvalid(ValidateStudySpec(WithReplicas(
                    "replicas { type: MASTER count: 1 gpus_per_replica: -2 }")),
                {"job_template.replicas[0].gpus_per_replica", "-2"});
  ExpectInvalid(ValidateStudySpec(WithReplicas("replicas { count: 1 }")),
                {"job_template.replicas[0].type", "unset"});
  ExpectInvalid(ValidateStudySpec(WithReplicas(
                    "gpus_per_trial: 1 replicas { type: MASTER count: 1 }")),
                {"job_template.gpus_per_trial", "gpus_per_replica"});
}

TEST(ValidateStudySpecTest, AshaReductionFactorOne) {
  StudySpec spec = ValidSpec();
  spec.mutable_early_stopping()->mutable_asha()->set_reduction_factor(1);
  ExpectInvalid(ValidateStudySpec(spec),
                {"early_stopping.asha.reduction_factor", "1"});
}

// --- ValidateTrialParameters ---

Parameter Num(const std::string& id, double v) {
  Parameter p;
  p.set_parameter_id(id);
  p.mutable_value()->set_number_value(v);
  return p;
}

Parameter Str(const std::string& id, const std::string& v) {
  Parameter p;
  p.set_parameter_id(id);
  p.mutable_value()->set_string_value(v);
  return p;
}

std::vector<Parameter> SgdTrial() {
  return {Num("lr", 0.01), Num("layers", 3), Str("opt", "sgd"),
          Num("momentum", 0.9), Num("batch", 32)};
}

TEST(ValidateTrialParametersTest, ValidAssignmentsPass) {
  EXPECT_TRUE(ValidateTrialParameters(ValidSpec(), SgdTrial()).ok());
  std::vector<Parameter> adam = {Num("batch", 64), Num("beta1", 0.9),
                                 Str("opt", "adam"), Num("layers", 8),
                                 Num("lr", 1e-4)};
  EXPECT_TRUE(ValidateTrialParameters(ValidSpec(), adam).ok());
  cairn::v1::Trial trial;
  for (const Parameter& p : SgdTrial()) *trial.add_parameters() = p;
  EXPECT_TRUE(ValidateTrialParameters(ValidSpec(), trial.parameters()).ok());
}

TEST(ValidateTrialParametersTest, MissingParameter) {
  std::vector<Parameter> params = SgdTrial();
  params.erase(params.begin() + 1);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"missing", "\"layers\""});
}

TEST(ValidateTrialParametersTest, MissingActiveChild) {
  std::vector<Parameter> params = SgdTrial();
  params.erase(params.begin() + 3);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"missing", "\"momentum\"", "opt"});
}

TEST(ValidateTrialParametersTest, InactiveChild) {
  std::vector<Parameter> params = SgdTrial();
  params[2] = Str("opt", "adam");
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[3] (momentum)", "not active", "\"adam\""});
}

TEST(ValidateTrialParametersTest, UnknownParameter) {
  std::vector<Parameter> params = SgdTrial();
  params.push_back(Num("dropout", 0.1));
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[5] (dropout)", "unknown"});
}

TEST(ValidateTrialParametersTest, DuplicateParameter) {
  std::vector<Parameter> params = SgdTrial();
  params.push_back(Num("lr", 0.02));
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[5] (lr)", "duplicate", "parameters[0]"});
}

TEST(ValidateTrialParametersTest, StringForNumber) {
  std::vector<Parameter> params = SgdTrial();
  params[0] = Str("lr", "0.01");
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[0] (lr)", "\"0.01\"", "number"});
}

TEST(ValidateTrialParametersTest, NumberForCategory) {
  std::vector<Parameter> params = SgdTrial();
  params[2] = Num("opt", 1);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[2] (opt)", "value 1", "string"});
}

TEST(ValidateTrialParametersTest, IntegerNotIntegral) {
  std::vector<Parameter> params = SgdTrial();
  params[1] = Num("layers", 2.5);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[1] (layers)", "2.5", "integer"});
}

TEST(ValidateTrialParametersTest, AboveMax) {
  std::vector<Parameter> params = SgdTrial();
  params[0] = Num("lr", 0.5);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[0] (lr)", "0.5", "outside [0.0001, 0.1]"});
}

TEST(ValidateTrialParametersTest, BelowMin) {
  std::vector<Parameter> params = SgdTrial();
  params[1] = Num("layers", 0);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[1] (layers)", "value 0", "outside [1, 8]"});
}

TEST(ValidateTrialParametersTest, UnknownCategory) {
  std::vector<Parameter> params = SgdTrial();
  params[2] = Str("opt", "lamb");
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[2] (opt)", "\"lamb\"", "categorical_values"});
}

TEST(ValidateTrialParametersTest, NotADiscreteValue) {
  std::vector<Parameter> params = SgdTrial();
  params[4] = Num("batch", 48);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[4] (batch)", "48", "discrete_values"});
}

TEST(ValidateTrialParametersTest, NaNValue) {
  std::vector<Parameter> params = SgdTrial();
  params[3] = Num("momentum", kNaN);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[3] (momentum)", "nan", "finite"});
}

TEST(ValidateTrialParametersTest, InfValue) {
  std::vector<Parameter> params = SgdTrial();
  params[0] = Num("lr", -kInf);
  ExpectInvalid(ValidateTrialParameters(ValidSpec(), params),
                {"parameters[0] (lr)", "-inf", "finite"});
}

TEST(ValidateTrialParametersTest, InvalidSpecIsReported) {
  StudySpec spec = ValidSpec();
  spec.clear_parameters();
  ExpectInvalid(ValidateTrialParameters(spec, SgdTrial()), {"parameters"});
}

// --- Measurements ---

Measurement MakeMeasurement(
    std::initializer_list<std::pair<std::string, double>> metrics) {
  Measurement m;
  m.set_step_count(10);
  for (const auto& [id, v] : metrics) {
    auto* metric = m.add_metrics();
    metric->set_metric_id(id);
    metric->set_value(v);
  }
  return m;
}

TEST(ValidateMeasurementTest, ExtraMetricsAreFine) {
  const Measurement m = MakeMeasurement({{"accuracy", 0.9}, {"lr", 0.01}});
  EXPECT_TRUE(ValidateMeasurement(m).ok());
}

TEST(ValidateMeasurementTest, NegativeStep) {
  Measurement m = MakeMeasurement({{"loss", 1}});
  m.set_step_count(-5);
  ExpectInvalid(ValidateMeasurement(m), {"step_count", "-5"});
}

TEST(ValidateMeasurementTest, NonFiniteValue) {
  ExpectInvalid(ValidateMeasurement(MakeMeasurement({{"loss", kNaN}})),
                {"metrics[0] (loss)", "nan"});
  ExpectInvalid(
      ValidateMeasurement(MakeMeasurement({{"loss", 1}, {"acc", kInf}})),
      {"metrics[1] (acc)", "inf"});
}

TEST(ValidateMeasurementTest, EmptyMetricId) {
  ExpectInvalid(ValidateMeasurement(MakeMeasurement({{"", 1}})),
                {"metrics[0]", "metric_id is empty"});
}

TEST(ValidateMeasurementTest, DuplicateMetricId) {
  ExpectInvalid(
      ValidateMeasurement(MakeMeasurement({{"loss", 1}, {"loss", 2}})),
      {"metrics[1] (loss)", "duplicate"});
}

TEST(ValidateMeasurementTest, FinalNeedsEveryObjective) {
  const StudySpec spec = ValidSpec();
  EXPECT_TRUE(
      ValidateFinalMeasurement(spec, MakeMeasurement({{"loss", 0.3}})).ok());
  EXPECT_TRUE(ValidateFinalMeasurement(
                  spec, MakeMeasurement({{"acc", 0.9}, {"loss", 0.3}}))
                  .ok());
  ExpectInvalid(ValidateFinalMeasurement(spec, MakeMeasurement({{"acc", 0.9}})),
                {"missing metric", "\"loss\""});
  ExpectInvalid(
      ValidateFinalMeasurement(spec, MakeMeasurement({{"loss", kNaN}})),
      {"metrics[0] (loss)", "nan"});
}

}  // namespace
}  // namespace cairn::tuner

namespace cairn::tuner {
namespace {

// A CATEGORICAL x with conditional children nested `depth` deep.
StudySpec NestedSpec(int depth) {
  StudySpec spec;
  spec.add_metrics()->set_metric_id("loss");
  spec.mutable_metrics(0)->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  ParameterSpec* p = spec.add_parameters();
  p->set_parameter_id("x");
  for (int d = 1; d <= depth; ++d) {
    p->set_type(ParameterSpec::CATEGORICAL);
    p->add_categorical_values("a");
    auto* c = p->add_conditional_parameter_specs();
    c->add_parent_categorical_values("a");
    p = c->mutable_parameter_spec();
    p->set_parameter_id("x" + std::to_string(d));
  }
  p->set_type(ParameterSpec::DOUBLE);
  p->set_max_value(1);
  return spec;
}

// In-process callers get the nesting limit too, and the recursion stops
// there however deep the spec goes.
TEST(ValidateStudySpecTest, ConditionalNestingStopsAtTheLimit) {
  EXPECT_TRUE(ValidateStudySpec(NestedSpec(10)).ok())
      << ValidateStudySpec(NestedSpec(10));
  for (int depth : {11, 49, 2000}) {
    const absl::Status s = ValidateStudySpec(NestedSpec(depth));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << depth;
    EXPECT_THAT(s.message(), HasSubstr("nest more than the limit of 10 deep"));
    EXPECT_LT(s.message().size(), 1024u);
  }
}

}  // namespace
}  // namespace cairn::tuner
