// See warm_start.h.
#include "sagemaker/warm_start.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::ParameterSpec;
using cairn::v1::Study;
using cairn::v1::Trial;
using nlohmann::json;

constexpr char kParentsField[] =
    "WarmStartConfig.ParentHyperParameterTuningJobs";

// The objective's value in a Completed trial's final measurement.
std::optional<double> ObjectiveValue(const Trial& trial,
                                     const std::string& metric_id) {
  if (TrainingJobStatus(&trial) != "Completed") return std::nullopt;
  for (const cairn::v1::Metric& m : trial.final_measurement().metrics()) {
    if (m.metric_id() == metric_id) return m.value();
  }
  return std::nullopt;
}

// `text` as a value of `p`, if `p`'s range holds it.
std::optional<google::protobuf::Value> ValueIn(const ParameterSpec& p,
                                               const std::string& text) {
  google::protobuf::Value v;
  if (p.type() == ParameterSpec::CATEGORICAL) {
    const auto& values = p.categorical_values();
    if (std::find(values.begin(), values.end(), text) == values.end()) {
      return std::nullopt;
    }
    v.set_string_value(text);
    return v;
  }
  double x = 0;
  if (!absl::SimpleAtod(text, &x) || !std::isfinite(x) || x < p.min_value() ||
      x > p.max_value() ||
      (p.type() == ParameterSpec::INTEGER && x != std::floor(x))) {
    return std::nullopt;
  }
  v.set_number_value(x);
  return v;
}

// The prior trial `trial` of `parent` becomes in `child`, if it fits.
std::optional<Trial> PriorTrial(const Study& parent, const Trial& trial,
                                const Study& child) {
  const std::string& metric_id = child.spec().metrics(0).metric_id();
  std::optional<double> objective = ObjectiveValue(trial, metric_id);
  if (!objective) return std::nullopt;
  auto values = TrialHyperParameters(
      parent.spec().sagemaker_training_job().hyper_parameters(), trial);
  if (!values.ok()) return std::nullopt;
  Trial prior;
  for (const ParameterSpec& p : child.spec().parameters()) {
    auto text = values->find(p.parameter_id());
    if (text == values->end()) return std::nullopt;
    std::optional<google::protobuf::Value> v = ValueIn(p, text->second);
    if (!v) return std::nullopt;
    auto* param = prior.add_parameters();
    param->set_parameter_id(p.parameter_id());
    *param->mutable_value() = *std::move(v);
  }
  auto* metric = prior.mutable_final_measurement()->add_metrics();
  metric->set_metric_id(metric_id);
  metric->set_value(*objective);
  (*prior.mutable_labels())[kWarmStartTrialLabel] = parent.display_name();
  (*prior.mutable_labels())[kWarmStartTrialIdLabel] = absl::StrCat(trial.id());
  return prior;
}

// The parent's channels as "name=uri" lines, to compare data.
std::string ChannelsOf(const Study& study) {
  std::string out;
  for (const auto& c :
       study.spec().sagemaker_training_job().input_data_config()) {
    absl::StrAppend(
        &out, c.channel_name(), "=", c.data_source().s3_data_source().s3_uri(),
        c.data_source().file_system_data_source().directory_path(), "\n");
  }
  return out;
}

// IdenticalDataAndAlgorithm's rules for `parent`.
absl::Status CheckIdentical(const Study& parent, const Study& child) {
  const auto& p = parent.spec().sagemaker_training_job();
  const auto& c = child.spec().sagemaker_training_job();
  const std::string& name = parent.display_name();
  if (p.algorithm_specification().training_image() !=
      c.algorithm_specification().training_image()) {
    return InvalidField(kParentsField, name,
                        "IdenticalDataAndAlgorithm needs the parent's "
                        "TrainingImage (use TransferLearning)");
  }
  if (ChannelsOf(parent) != ChannelsOf(child)) {
    return InvalidField(kParentsField, name,
                        "IdenticalDataAndAlgorithm needs the parent's "
                        "InputDataConfig (use TransferLearning)");
  }
  if (p.hyper_parameters_size() + parent.spec().parameters_size() !=
      c.hyper_parameters_size() + child.spec().parameters_size()) {
    return InvalidField(kParentsField, name,
                        "IdenticalDataAndAlgorithm needs as many static plus "
                        "tunable hyperparameters as the parent");
  }
  return absl::OkStatus();
}

absl::Status CheckParent(const WarmStartConfig& config, const Study& parent,
                         const Study& child) {
  const std::string& name = parent.display_name();
  // Without its trials a stopping parent reads Stopped: not InProgress
  // either way.
  if (TuningJobStatus(parent, {}) == "InProgress") {
    return InvalidField(kParentsField, name,
                        "is InProgress; a parent must have finished");
  }
  if (parent.spec().metrics_size() != 1 ||
      parent.spec().metrics(0).metric_id() !=
          child.spec().metrics(0).metric_id() ||
      parent.spec().metrics(0).goal() != child.spec().metrics(0).goal()) {
    return InvalidField(kParentsField, name,
                        "has another HyperParameterTuningJobObjective");
  }
  return config.type == "IdenticalDataAndAlgorithm"
             ? CheckIdentical(parent, child)
             : absl::OkStatus();
}

}  // namespace

absl::StatusOr<WarmStartConfig> ParseWarmStartConfig(const json& config) {
  if (!config.is_object()) {
    return InvalidField("WarmStartConfig", "", "must be an object");
  }
  for (const auto& [key, value] : config.items()) {
    if (key != "ParentHyperParameterTuningJobs" && key != "WarmStartType") {
      return InvalidField(absl::StrCat("WarmStartConfig.", key), "",
                          "is not a member of WarmStartConfig");
    }
  }
  WarmStartConfig out;
  out.type = config.value("WarmStartType", "");
  if (out.type != "IdenticalDataAndAlgorithm" &&
      out.type != "TransferLearning") {
    return InvalidField(
        "WarmStartConfig.WarmStartType", out.type,
        "must be IdenticalDataAndAlgorithm or TransferLearning");
  }
  const json parents =
      config.value("ParentHyperParameterTuningJobs", json::array());
  if (!parents.is_array() || parents.empty() ||
      parents.size() > kMaxWarmStartParents) {
    return InvalidField(
        kParentsField, absl::StrCat(parents.size()),
        absl::StrCat("must list 1 to ", kMaxWarmStartParents, " tuning jobs"));
  }
  std::set<std::string> seen;
  for (const json& parent : parents) {
    const json name = parent.is_object() && parent.size() == 1
                          ? parent.value("HyperParameterTuningJobName", json())
                          : json();
    const std::string text = name.is_string() ? name.get<std::string>() : "";
    absl::Status s = ValidateJobName(
        absl::StrCat(kParentsField, ".HyperParameterTuningJobName"), text,
        kMaxTuningJobNameLength);
    if (!s.ok()) return s;
    if (!seen.insert(text).second) {
      return InvalidField(kParentsField, text, "is listed twice");
    }
    out.parents.push_back(text);
  }
  return out;
}

absl::StatusOr<std::vector<Trial>> WarmStartTrials(
    const WarmStartConfig& config, const Study& child,
    const std::vector<WarmStartParent>& parents) {
  std::vector<Trial> out;
  for (const WarmStartParent& parent : parents) {
    if (absl::Status s = CheckParent(config, parent.study, child); !s.ok()) {
      return s;
    }
    for (const Trial& trial : parent.trials) {
      if (IsWarmStartTrial(trial)) continue;  // The grandparents' data.
      std::optional<Trial> prior = PriorTrial(parent.study, trial, child);
      if (prior) out.push_back(*std::move(prior));
    }
  }
  return out;
}

void SetWarmStartLabels(const WarmStartConfig& config, Study* study) {
  auto& labels = *study->mutable_spec()->mutable_labels();
  labels[kWarmStartTypeLabel] = config.type;
  labels[kWarmStartParentsLabel] = absl::StrJoin(config.parents, ",");
}

json WarmStartConfigJson(const Study& study) {
  const auto& labels = study.spec().labels();
  auto type = labels.find(kWarmStartTypeLabel);
  auto parents = labels.find(kWarmStartParentsLabel);
  if (type == labels.end() || parents == labels.end()) return nullptr;
  json list = json::array();
  for (absl::string_view name :
       absl::StrSplit(parents->second, ',', absl::SkipEmpty())) {
    list.push_back({{"HyperParameterTuningJobName", std::string(name)}});
  }
  return {{"WarmStartType", type->second},
          {"ParentHyperParameterTuningJobs", list}};
}

bool IsWarmStartTrial(const Trial& trial) {
  return trial.labels().contains(kWarmStartTrialLabel);
}

}  // namespace cairn::sagemaker
