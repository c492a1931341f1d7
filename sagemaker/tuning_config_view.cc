// See tuning_config_view.h.
#include "sagemaker/tuning_config_view.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "api/trial_states.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"
#include "sagemaker/warm_start.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::ParameterSpec;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using nlohmann::json;

std::string StrategyOf(const StudySpec& spec) {
  switch (spec.algorithm()) {
    case StudySpec::GP_BANDIT:
      return "Bayesian";
    case StudySpec::GRID_SEARCH:
      return "Grid";
    default:
      return spec.early_stopping().has_asha() ? "Hyperband" : "Random";
  }
}

const char* ScalingTypeOf(ParameterSpec::ScaleType scale) {
  switch (scale) {
    case ParameterSpec::UNIT_LINEAR_SCALE:
      return "Linear";
    case ParameterSpec::UNIT_LOG_SCALE:
      return "Logarithmic";
    case ParameterSpec::UNIT_REVERSE_LOG_SCALE:
      return "ReverseLogarithmic";
    default:
      return "Auto";
  }
}

json ParameterRangesJson(const StudySpec& spec) {
  json ranges = json::object();
  for (const ParameterSpec& p : spec.parameters()) {
    if (p.type() == ParameterSpec::CATEGORICAL) {
      ranges["CategoricalParameterRanges"].push_back(
          {{"Name", p.parameter_id()},
           {"Values", std::vector<std::string>(p.categorical_values().begin(),
                                               p.categorical_values().end())}});
      continue;
    }
    const char* kind = p.type() == ParameterSpec::INTEGER
                           ? "IntegerParameterRanges"
                           : "ContinuousParameterRanges";
    ranges[kind].push_back({{"Name", p.parameter_id()},
                            {"MinValue", NumberText(p.min_value())},
                            {"MaxValue", NumberText(p.max_value())},
                            {"ScalingType", ScalingTypeOf(p.scale_type())}});
  }
  return ranges;
}

// Whether the tuning job has ended (neither InProgress nor Stopping).
bool Ended(const Study& study, const std::vector<Trial>& trials) {
  const std::string status = TuningJobStatus(study, trials);
  return status != "InProgress" && status != "Stopping";
}

// The latest end among its own training jobs; nullopt when none ended.
std::optional<double> LastEnd(const std::vector<Trial>& trials) {
  std::optional<double> last;
  for (const Trial& t : trials) {
    if (IsWarmStartTrial(t) || api::IsPendingState(t.state()) ||
        !t.has_end_time()) {
      continue;
    }
    last = std::max(last.value_or(0), EpochSeconds(t.end_time()));
  }
  return last;
}

// LastModifiedTime and, once ended, HyperParameterTuningEndTime.
void AddTimes(const Study& study, const std::vector<Trial>& trials, json* out) {
  const double created = EpochSeconds(study.create_time());
  double modified = created;
  for (const Trial& t : trials) {
    if (IsWarmStartTrial(t)) continue;
    modified = std::max(modified, EpochSeconds(t.start_time()));
  }
  const std::optional<double> last_end = LastEnd(trials);
  if (last_end) modified = std::max(modified, *last_end);
  (*out)["CreationTime"] = created;
  (*out)["LastModifiedTime"] = modified;
  if (Ended(study, trials)) {
    (*out)["HyperParameterTuningEndTime"] = last_end.value_or(modified);
  }
}

std::string TuningFailureReason(const Study& study,
                                const std::vector<Trial>& trials) {
  std::string reason = study.inactive_reason();
  if (reason.empty()) reason = "the tuning job failed";
  for (auto t = trials.rbegin(); t != trials.rend(); ++t) {
    if (TrainingJobStatus(&*t) != "Failed" || IsWarmStartTrial(*t)) continue;
    absl::StrAppend(
        &reason, "; training job ",
        TuningTrainingJobName(study.display_name(), study.name(), t->id()),
        " failed: ", JobFailureReason(*t));
    break;
  }
  return FailureReasonText(std::move(reason));
}

// What Describe and a summary share: counters, name, ARN, status, times.
json TuningJobHead(const Study& study, const std::vector<Trial>& trials) {
  json out = TuningCounters(trials, ObjectiveOfStudy(study));
  out["HyperParameterTuningJobName"] = study.display_name();
  out["HyperParameterTuningJobArn"] = TuningJobArn(study.display_name());
  out["HyperParameterTuningJobStatus"] = TuningJobStatus(study, trials);
  AddTimes(study, trials, &out);
  return out;
}

}  // namespace

json TuningJobConfigJson(const Study& study, const std::vector<Trial>& trials) {
  const StudySpec& spec = study.spec();
  const TuningObjective objective = ObjectiveOfStudy(study);
  json config = {{"Strategy", StrategyOf(spec)},
                 {"HyperParameterTuningJobObjective",
                  {{"Type", objective.minimize ? "Minimize" : "Maximize"},
                   {"MetricName", objective.metric_name}}},
                 {"ResourceLimits", ResourceLimitsJson(study, trials)},
                 {"ParameterRanges", ParameterRangesJson(spec)},
                 {"TrainingJobEarlyStoppingType",
                  spec.early_stopping().has_median() ? "Auto" : "Off"}};
  if (spec.early_stopping().has_asha()) {
    json hyperband = {
        {"MinResource", spec.early_stopping().asha().min_resource()}};
    if (spec.early_stopping().asha().max_resource() > 0) {
      hyperband["MaxResource"] = spec.early_stopping().asha().max_resource();
    }
    config["StrategyConfig"] = {{"HyperbandStrategyConfig", hyperband}};
  }
  return config;
}

json TrainingJobDefinitionJson(const Study& study) {
  json definition = RequestJson(study.spec().sagemaker_training_job());
  definition.erase("TrainingJobName");
  definition.erase("Tags");  // the tuning job's own
  if (definition.contains("HyperParameters")) {
    definition["StaticHyperParameters"] = definition["HyperParameters"];
    definition.erase("HyperParameters");
  }
  return definition;
}

json DescribeTuningJobJson(const Study& study,
                           const std::vector<Trial>& trials) {
  json out = TuningJobHead(study, trials);
  out["HyperParameterTuningJobConfig"] = TuningJobConfigJson(study, trials);
  out["TrainingJobDefinition"] = TrainingJobDefinitionJson(study);
  json best = BestTrainingJob(study, trials);
  if (!best.is_null()) out["BestTrainingJob"] = std::move(best);
  json warm = WarmStartConfigJson(study);
  if (!warm.is_null()) out["WarmStartConfig"] = std::move(warm);
  if (out["HyperParameterTuningJobStatus"] == "Failed") {
    out["FailureReason"] = TuningFailureReason(study, trials);
  }
  return out;
}

json TuningJobSummaryJson(const Study& study,
                          const std::vector<Trial>& trials) {
  json s = TuningJobHead(study, trials);
  s["Strategy"] = StrategyOf(study.spec());
  s["ResourceLimits"] = ResourceLimitsJson(study, trials);
  return s;
}

}  // namespace cairn::sagemaker
