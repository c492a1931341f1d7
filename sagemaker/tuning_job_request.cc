// See tuning_job_request.h.
#include "sagemaker/tuning_job_request.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;
using nlohmann::json;

// Members of the request, its config and a range Cairn reads; others are
// refused by name so nothing a caller asked for is silently dropped.
absl::Status OnlyMembers(absl::string_view where, const json& object,
                         std::initializer_list<absl::string_view> known) {
  if (!object.is_object()) return InvalidField(where, "", "must be an object");
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return InvalidField(absl::StrCat(where, ".", key), "",
                          "is not supported by Cairn");
    }
  }
  return absl::OkStatus();
}

std::string StringOf(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<double> NumberOf(absl::string_view field, const json& range,
                                const char* key) {
  std::string text = StringOf(range, key);
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
    return InvalidField(field, text, "must be a finite number");
  }
  return value;
}

absl::Status SetScale(absl::string_view field, const json& range,
                      ParameterSpec* p) {
  std::string scaling = StringOf(range, "ScalingType");
  // Auto (the default) is linear too; kept apart so Describe says Auto.
  if (scaling.empty() || scaling == "Auto" || scaling == "Linear") {
    p->set_scale_type(scaling == "Linear"
                          ? ParameterSpec::UNIT_LINEAR_SCALE
                          : ParameterSpec::SCALE_TYPE_UNSPECIFIED);
    return absl::OkStatus();
  }
  if (scaling != "Logarithmic" && scaling != "ReverseLogarithmic") {
    return InvalidField(
        absl::StrCat(field, ".ScalingType"), scaling,
        "must be one of Auto Linear Logarithmic ReverseLogarithmic");
  }
  if (p->min_value() <= 0) {
    return InvalidField(absl::StrCat(field, ".MinValue"),
                        absl::StrCat(p->min_value()),
                        absl::StrCat(scaling, " scaling needs MinValue > 0"));
  }
  const bool reverse = scaling == "ReverseLogarithmic";
  if (reverse && p->type() == ParameterSpec::INTEGER) {
    return InvalidField(absl::StrCat(field, ".ScalingType"), scaling,
                        "not allowed for IntegerParameterRanges");
  }
  if (reverse && p->max_value() >= 1) {
    return InvalidField(absl::StrCat(field, ".MaxValue"),
                        absl::StrCat(p->max_value()),
                        "ReverseLogarithmic scaling needs MaxValue < 1");
  }
  p->set_scale_type(reverse ? ParameterSpec::UNIT_REVERSE_LOG_SCALE
                            : ParameterSpec::UNIT_LOG_SCALE);
  return absl::OkStatus();
}

absl::Status AddNumericRange(absl::string_view kind, const json& range,
                             bool integer, StudySpec* spec) {
  std::string field = absl::StrCat("ParameterRanges.", kind);
  if (absl::Status s = OnlyMembers(
          field, range, {"Name", "MinValue", "MaxValue", "ScalingType"});
      !s.ok()) {
    return s;
  }
  ParameterSpec* p = spec->add_parameters();
  p->set_parameter_id(StringOf(range, "Name"));
  p->set_type(integer ? ParameterSpec::INTEGER : ParameterSpec::DOUBLE);
  absl::StatusOr<double> min = NumberOf(field + ".MinValue", range, "MinValue");
  if (!min.ok()) return min.status();
  absl::StatusOr<double> max = NumberOf(field + ".MaxValue", range, "MaxValue");
  if (!max.ok()) return max.status();
  if (integer && (*min != std::floor(*min) || *max != std::floor(*max))) {
    return InvalidField(field, p->parameter_id(),
                        "MinValue and MaxValue must be integers");
  }
  if (*min > *max) {
    return InvalidField(absl::StrCat(field, ".MinValue"), absl::StrCat(*min),
                        absl::StrCat("is above MaxValue ", *max));
  }
  p->set_min_value(*min);
  p->set_max_value(*max);
  return SetScale(field, range, p);
}

absl::Status AddCategoricalRange(const json& range, StudySpec* spec) {
  constexpr char kField[] = "ParameterRanges.CategoricalParameterRanges";
  if (absl::Status s = OnlyMembers(kField, range, {"Name", "Values"});
      !s.ok()) {
    return s;
  }
  ParameterSpec* p = spec->add_parameters();
  p->set_parameter_id(StringOf(range, "Name"));
  p->set_type(ParameterSpec::CATEGORICAL);
  auto values = range.find("Values");
  if (values == range.end() || !values->is_array() || values->empty() ||
      values->size() > 30) {
    return InvalidField(absl::StrCat(kField, ".Values"), p->parameter_id(),
                        "must hold 1 to 30 strings");
  }
  std::set<std::string> seen;
  for (const json& v : *values) {
    if (!v.is_string() || v.get<std::string>().empty() ||
        !seen.insert(v.get<std::string>()).second) {
      return InvalidField(absl::StrCat(kField, ".Values"), p->parameter_id(),
                          "values must be distinct non-empty strings");
    }
    p->add_categorical_values(v.get<std::string>());
  }
  return absl::OkStatus();
}

// The ranges of each kind, then the names: unique, 1 to 256 bytes, not
// also a static hyperparameter.
absl::Status AddRanges(const json& ranges, const TuningJobRequest& r,
                       StudySpec* spec) {
  absl::Status s =
      OnlyMembers("ParameterRanges", ranges,
                  {"IntegerParameterRanges", "ContinuousParameterRanges",
                   "CategoricalParameterRanges"});
  for (const char* kind :
       {"IntegerParameterRanges", "ContinuousParameterRanges",
        "CategoricalParameterRanges"}) {
    auto list = ranges.find(kind);
    if (!s.ok() || list == ranges.end()) continue;
    if (!list->is_array()) return InvalidField(kind, "", "must be a list");
    for (const json& range : *list) {
      if (!s.ok()) break;
      const absl::string_view k = kind;
      s = k == "CategoricalParameterRanges"
              ? AddCategoricalRange(range, spec)
              : AddNumericRange(k, range, k == "IntegerParameterRanges", spec);
    }
  }
  if (!s.ok()) return s;
  if (spec->parameters().empty() ||
      spec->parameters_size() > kMaxParameterRanges) {
    return InvalidField(
        "ParameterRanges", absl::StrCat(spec->parameters_size()),
        absl::StrCat("must hold 1 to ", kMaxParameterRanges, " ranges"));
  }
  std::set<std::string> names;
  for (const ParameterSpec& p : spec->parameters()) {
    const std::string& name = p.parameter_id();
    if (name.empty() || name.size() > 256 || !names.insert(name).second ||
        r.training.hyper_parameters().contains(name)) {
      return InvalidField("ParameterRanges.Name", name,
                          "must be 1 to 256 bytes, unique, and not a "
                          "StaticHyperParameters key");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> CountOf(const json& limits, const char* key, int max) {
  std::string field = absl::StrCat("ResourceLimits.", key);
  auto it = limits.find(key);
  if (it == limits.end() || !it->is_number_integer() ||
      it->get<int64_t>() < 1 || it->get<int64_t>() > max) {
    return InvalidField(field, it == limits.end() ? "" : it->dump(),
                        absl::StrCat("must be an integer from 1 to ", max));
  }
  return it->get<int>();
}

absl::Status SetLimits(const json& config, StudySpec* spec) {
  auto limits = config.find("ResourceLimits");
  if (limits == config.end()) {
    return InvalidField("ResourceLimits", "", "is required");
  }
  absl::Status s =
      OnlyMembers("ResourceLimits", *limits,
                  {"MaxNumberOfTrainingJobs", "MaxParallelTrainingJobs"});
  if (!s.ok()) return s;
  absl::StatusOr<int> total =
      CountOf(*limits, "MaxNumberOfTrainingJobs", kMaxTrainingJobsPerTuningJob);
  if (!total.ok()) return total.status();
  absl::StatusOr<int> parallel =
      CountOf(*limits, "MaxParallelTrainingJobs", kMaxParallelTrainingJobs);
  if (!parallel.ok()) return parallel.status();
  spec->set_max_trials(*total);
  spec->set_max_parallel_trials(*parallel);
  return absl::OkStatus();
}

// Strategy, StrategyConfig and TrainingJobEarlyStoppingType.
absl::Status SetAlgorithm(const json& config, StudySpec* spec) {
  const std::string strategy = StringOf(config, "Strategy");
  const std::string stopping = StringOf(config, "TrainingJobEarlyStoppingType");
  if (strategy == "Bayesian") {
    spec->set_algorithm(StudySpec::GP_BANDIT);
  } else if (strategy == "Random" || strategy == "Hyperband") {
    spec->set_algorithm(StudySpec::RANDOM_SEARCH);
  } else if (strategy == "Grid") {
    spec->set_algorithm(StudySpec::GRID_SEARCH);
  } else {
    return InvalidField("Strategy", strategy,
                        "must be one of Bayesian Random Hyperband Grid");
  }
  if (!stopping.empty() && stopping != "Off" && stopping != "Auto") {
    return InvalidField("TrainingJobEarlyStoppingType", stopping,
                        "must be Off or Auto");
  }
  if (strategy == "Hyperband" && stopping == "Auto") {
    return InvalidField("TrainingJobEarlyStoppingType", stopping,
                        "must be Off with the Hyperband strategy");
  }
  if (stopping == "Auto") spec->mutable_early_stopping()->mutable_median();
  if (strategy != "Hyperband") {
    return config.contains("StrategyConfig")
               ? InvalidField("StrategyConfig", strategy,
                              "only the Hyperband strategy takes one")
               : absl::OkStatus();
  }
  auto* asha = spec->mutable_early_stopping()->mutable_asha();
  asha->set_min_resource(1);
  json hyperband = config.value("StrategyConfig", json::object())
                       .value("HyperbandStrategyConfig", json::object());
  if (absl::Status s = OnlyMembers("HyperbandStrategyConfig", hyperband,
                                   {"MinResource", "MaxResource"});
      !s.ok()) {
    return s;
  }
  if (hyperband.contains("MinResource")) {
    asha->set_min_resource(hyperband.value("MinResource", 0));
  }
  if (hyperband.contains("MaxResource")) {
    asha->set_max_resource(hyperband.value("MaxResource", 0));
  }
  if (asha->min_resource() < 1 ||
      (asha->max_resource() != 0 &&
       asha->max_resource() < asha->min_resource())) {
    return InvalidField("HyperbandStrategyConfig.MinResource",
                        absl::StrCat(asha->min_resource()),
                        "must be at least 1 and at most MaxResource");
  }
  return absl::OkStatus();
}

// The objective must name one of the definition's MetricDefinitions.
absl::Status SetObjective(const json& config, TuningJobRequest* r) {
  auto objective = config.find("HyperParameterTuningJobObjective");
  if (objective == config.end()) {
    return InvalidField("HyperParameterTuningJobObjective", "", "is required");
  }
  absl::Status s = OnlyMembers("HyperParameterTuningJobObjective", *objective,
                               {"Type", "MetricName"});
  if (!s.ok()) return s;
  const std::string type = StringOf(*objective, "Type");
  if (type != "Minimize" && type != "Maximize") {
    return InvalidField("HyperParameterTuningJobObjective.Type", type,
                        "must be Minimize or Maximize");
  }
  r->objective_metric_name = StringOf(*objective, "MetricName");
  bool defined = false;
  for (const auto& m :
       r->training.algorithm_specification().metric_definitions()) {
    defined = defined || m.name() == r->objective_metric_name;
  }
  if (!defined) {
    return InvalidField(
        "HyperParameterTuningJobObjective.MetricName", r->objective_metric_name,
        "is not among AlgorithmSpecification.MetricDefinitions");
  }
  auto* metric = r->spec.add_metrics();
  metric->set_metric_id(MetricIdOf(r->objective_metric_name));
  metric->set_goal(type == "Minimize" ? cairn::v1::MetricSpec::MINIMIZE
                                      : cairn::v1::MetricSpec::MAXIMIZE);
  return absl::OkStatus();
}

// TrainingJobDefinition as a CreateTrainingJob body, validated like one.
absl::Status SetTraining(const json& body, TuningJobRequest* r) {
  auto definition = body.find("TrainingJobDefinition");
  if (definition == body.end() || !definition->is_object()) {
    return InvalidField("TrainingJobDefinition", "",
                        "is required (TrainingJobDefinitions is not "
                        "supported by Cairn)");
  }
  json training = *definition;
  if (training.contains("Tags")) {
    return InvalidField("TrainingJobDefinition.Tags", "",
                        "give the tuning job's Tags at the top level");
  }
  if (training.contains("HyperParameters")) {
    return InvalidField("TrainingJobDefinition.HyperParameters", "",
                        "use StaticHyperParameters");
  }
  // HyperParameterTrainingJobDefinition's members; those Cairn does not
  // run are refused below, as CreateTrainingJob refuses them.
  absl::Status s = OnlyMembers(
      "TrainingJobDefinition", training,
      {"DefinitionName", "TuningObjective", "HyperParameterRanges",
       "StaticHyperParameters", "AlgorithmSpecification", "RoleArn",
       "InputDataConfig", "VpcConfig", "OutputDataConfig", "ResourceConfig",
       "StoppingCondition", "EnableNetworkIsolation",
       "EnableInterContainerTrafficEncryption", "EnableManagedSpotTraining",
       "CheckpointConfig", "RetryStrategy",
       "HyperParameterTuningResourceConfig"});
  if (s.ok()) {
    s = OnlyMembers("TrainingJobDefinition.AlgorithmSpecification",
                    training.value("AlgorithmSpecification", json::object()),
                    {"TrainingImage", "TrainingInputMode", "AlgorithmName",
                     "MetricDefinitions"});
  }
  if (!s.ok()) return s;
  if (body.contains("Tags")) training["Tags"] = body["Tags"];
  if (training.contains("StaticHyperParameters")) {
    training["HyperParameters"] = training["StaticHyperParameters"];
    training.erase("StaticHyperParameters");
  }
  training["TrainingJobName"] = r->name;
  absl::StatusOr<cairn::v1::SageMakerCreateTrainingJobRequest> parsed =
      ParseCreateTrainingJob(training.dump());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TrainingJobDefinition: ", parsed.status().message()));
  }
  r->training = *std::move(parsed);
  return absl::OkStatus();
}

absl::Status FillRequest(const json& body, TuningJobRequest* r) {
  absl::Status s = OnlyMembers(
      "request", body,
      {"HyperParameterTuningJobName", "HyperParameterTuningJobConfig",
       "TrainingJobDefinition", "Tags", "WarmStartConfig"});
  if (!s.ok()) return s;
  r->name = StringOf(body, "HyperParameterTuningJobName");
  s = ValidateJobName("HyperParameterTuningJobName", r->name,
                      kMaxTuningJobNameLength);
  if (s.ok()) s = SetTraining(body, r);
  const json config =
      body.value("HyperParameterTuningJobConfig", json::object());
  if (s.ok()) {
    s = OnlyMembers(
        "HyperParameterTuningJobConfig", config,
        {"Strategy", "StrategyConfig", "HyperParameterTuningJobObjective",
         "ResourceLimits", "ParameterRanges", "TrainingJobEarlyStoppingType"});
  }
  if (s.ok()) s = SetAlgorithm(config, &r->spec);
  if (s.ok()) s = SetLimits(config, &r->spec);
  if (s.ok()) s = SetObjective(config, r);
  if (s.ok()) {
    s = AddRanges(config.value("ParameterRanges", json::object()), *r,
                  &r->spec);
  }
  if (s.ok() && body.contains("WarmStartConfig")) {
    absl::StatusOr<WarmStartConfig> warm =
        ParseWarmStartConfig(body["WarmStartConfig"]);
    if (!warm.ok()) return warm.status();
    r->warm_start = *std::move(warm);
  }
  return s;
}

}  // namespace

absl::StatusOr<TuningJobRequest> ParseCreateTuningJob(absl::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError("request body: not JSON");
  }
  TuningJobRequest r;
  try {
    if (absl::Status s = FillRequest(parsed, &r); !s.ok()) return s;
  } catch (const json::exception&) {
    return InvalidField("request body", "", "a member has the wrong type");
  }
  return r;
}

std::string TuningTrainingJobName(absl::string_view tuning_name,
                                  absl::string_view study_name,
                                  int64_t trial_id) {
  // FNV-1a: stable across processes, unlike absl::Hash.
  uint32_t hash = 2166136261u;
  for (char c : absl::StrCat(study_name, "/", trial_id)) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  return absl::StrFormat("%s-%03d-%08x", tuning_name, trial_id, hash);
}

std::string NumberText(double x) {
  char text[32];
  if (std::abs(x) < 9e15 && x == std::floor(x)) {
    auto [end, ec] =
        std::to_chars(text, text + sizeof(text), static_cast<int64_t>(x));
    return std::string(text, end);
  }
  // Plain decimals ("0.0001", not "1e-04") unless they grow long.
  auto [end, ec] =
      std::to_chars(text, text + sizeof(text), x, std::chars_format::fixed);
  if (ec == std::errc() && end - text <= 20) return std::string(text, end);
  auto [short_end, short_ec] = std::to_chars(text, text + sizeof(text), x);
  return std::string(text, short_end);
}

absl::StatusOr<std::map<std::string, std::string>> TrialHyperParameters(
    const google::protobuf::Map<std::string, std::string>&
        static_hyperparameters,
    const cairn::v1::Trial& trial) {
  std::map<std::string, std::string> out(static_hyperparameters.begin(),
                                         static_hyperparameters.end());
  for (const cairn::v1::Parameter& p : trial.parameters()) {
    const google::protobuf::Value& v = p.value();
    if (v.has_string_value()) {
      out[p.parameter_id()] = v.string_value();
    } else if (v.has_number_value() && std::isfinite(v.number_value())) {
      out[p.parameter_id()] = NumberText(v.number_value());
    } else {
      return InvalidField("trial parameter", p.parameter_id(),
                          "has neither a finite number nor a string value");
    }
  }
  return out;
}

}  // namespace cairn::sagemaker
