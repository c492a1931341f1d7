// See tuning_job_view.h.
#include "sagemaker/tuning_job_view.h"

#include <algorithm>
#include <optional>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/trial_states.h"
#include "sagemaker/container_files.h"
#include "sagemaker/job_timeline.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/warm_start.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

// The objective's value in the final measurement of a Completed or
// Stopped (early-stopped) trial.
std::optional<double> ObjectiveOf(const cairn::v1::Trial& trial,
                                  const TuningObjective& objective) {
  const std::string status = TrainingJobStatus(&trial);
  if (status != "Completed" && status != "Stopped") return std::nullopt;
  const std::string id = MetricIdOf(objective.metric_name);
  for (const cairn::v1::Metric& m : trial.final_measurement().metrics()) {
    if (m.metric_id() == id) return m.value();
  }
  return std::nullopt;
}

// Succeeded, Pending or Failed: whether the objective was evaluated.
const char* ObjectiveStatusOf(const cairn::v1::Trial& trial,
                              const TuningObjective& objective) {
  const std::string status = TrainingJobStatus(&trial);
  if (status == "InProgress" || status == "Stopping") return "Pending";
  return ObjectiveOf(trial, objective) ? "Succeeded" : "Failed";
}

// The Completed trial (none of a warm start's unless `with_prior`) with
// the best objective value; the earlier trial on a tie.
const cairn::v1::Trial* BestTrial(const std::vector<cairn::v1::Trial>& trials,
                                  const TuningObjective& objective,
                                  bool with_prior) {
  const cairn::v1::Trial* best = nullptr;
  double best_value = 0;
  for (const cairn::v1::Trial& trial : trials) {
    if (TrainingJobStatus(&trial) != "Completed") continue;
    std::optional<double> value = ObjectiveOf(trial, objective);
    if (!value || (IsWarmStartTrial(trial) && !with_prior)) continue;
    const bool better =
        best == nullptr ||
        (objective.minimize ? *value < best_value : *value > best_value) ||
        (*value == best_value && trial.id() < best->id());
    if (better) {
      best = &trial;
      best_value = *value;
    }
  }
  return best;
}

}  // namespace

cairn::v1::Study TuningJobStudy(const TuningJobRequest& request) {
  cairn::v1::Study study = TrainingJobStudy(request.training);
  study.set_display_name(request.name);
  cairn::v1::StudySpec* spec = study.mutable_spec();
  *spec->mutable_parameters() = request.spec.parameters();
  *spec->mutable_metrics() = request.spec.metrics();
  spec->set_algorithm(request.spec.algorithm());
  if (request.spec.has_early_stopping()) {
    *spec->mutable_early_stopping() = request.spec.early_stopping();
  }
  spec->set_max_trials(request.spec.max_trials());
  spec->set_max_parallel_trials(request.spec.max_parallel_trials());
  (*spec->mutable_labels())["sagemaker"] = kTuningJobLabel;
  (*spec->mutable_labels())[kObjectiveLabel] = request.objective_metric_name;
  return study;
}

absl::StatusOr<cairn::v1::SageMakerCreateTrainingJobRequest>
TrialTrainingRequest(const cairn::v1::Study& study,
                     const cairn::v1::Trial& trial) {
  cairn::v1::SageMakerCreateTrainingJobRequest request =
      study.spec().sagemaker_training_job();
  if (!IsTuningJobStudy(study)) return request;
  auto hyperparameters =
      TrialHyperParameters(request.hyper_parameters(), trial);
  if (!hyperparameters.ok()) return hyperparameters.status();
  request.set_training_job_name(
      TuningTrainingJobName(study.display_name(), study.name(), trial.id()));
  request.mutable_hyper_parameters()->clear();
  request.mutable_hyper_parameters()->insert(hyperparameters->begin(),
                                             hyperparameters->end());
  return request;
}

std::optional<TuningTrainingJobRef> ParseTuningTrainingJobName(
    absl::string_view name) {
  // <tuning>-<digits>-<8 hex>: split at the last two '-'.
  const size_t hex = name.rfind('-');
  if (hex == absl::string_view::npos || hex == 0) return std::nullopt;
  const size_t id = name.rfind('-', hex - 1);
  if (id == absl::string_view::npos || id == 0) return std::nullopt;
  absl::string_view digits = name.substr(id + 1, hex - id - 1);
  absl::string_view hash = name.substr(hex + 1);
  TuningTrainingJobRef ref;
  if (hash.size() != 8 || digits.size() < 3 ||
      !absl::c_all_of(hash, absl::ascii_isxdigit) ||
      !absl::c_all_of(digits, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &ref.trial_id)) {
    return std::nullopt;
  }
  ref.tuning_name = std::string(name.substr(0, id));
  return ref;
}

absl::StatusOr<cairn::v1::Study> TuningTrainingJobStudy(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial) {
  if (IsWarmStartTrial(trial)) {
    return absl::NotFoundError(absl::StrCat(
        "Requested resource not found: trial ", trial.id(), " of tuning job '",
        study.display_name(), "' came from a warm start's parent"));
  }
  auto request = TrialTrainingRequest(study, trial);
  if (!request.ok()) return request.status();
  cairn::v1::Study job = study;
  job.set_display_name(request->training_job_name());
  *job.mutable_spec()->mutable_sagemaker_training_job() = *std::move(request);
  *job.mutable_create_time() = trial.start_time();
  return job;
}

absl::StatusOr<json> DescribeTuningTrainingJobJson(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial) {
  absl::StatusOr<cairn::v1::Study> job = TuningTrainingJobStudy(study, trial);
  if (!job.ok()) return job.status();
  json out = DescribeTrainingJobJson(*job, &trial);
  out["TuningJobArn"] = TuningJobArn(study.display_name());
  return out;
}

std::string TuningJobArn(const std::string& name) {
  return "arn:aws:sagemaker:local:000000000000:hyper-parameter-tuning-job/" +
         name;
}

bool IsTuningJobStudy(const cairn::v1::Study& study) {
  auto label = study.spec().labels().find("sagemaker");
  return label != study.spec().labels().end() &&
         label->second == kTuningJobLabel;
}

std::string TuningJobStatus(const cairn::v1::Study& study,
                            const std::vector<cairn::v1::Trial>& trials) {
  switch (study.state()) {
    case cairn::v1::Study::COMPLETED:
      return "Completed";
    case cairn::v1::Study::FAILED:
      return "Failed";
    case cairn::v1::Study::INACTIVE:
      for (const cairn::v1::Trial& t : trials) {
        if (api::IsPendingState(t.state()) || api::HasLiveJob(t)) {
          return "Stopping";
        }
      }
      return "Stopped";
    default:
      return "InProgress";
  }
}

json TuningCounters(const std::vector<cairn::v1::Trial>& trials,
                    const TuningObjective& objective) {
  json jobs = {{"Completed", 0},
               {"InProgress", 0},
               {"RetryableError", 0},
               {"NonRetryableError", 0},
               {"Stopped", 0}};
  json objectives = {{"Succeeded", 0}, {"Pending", 0}, {"Failed", 0}};
  for (const cairn::v1::Trial& trial : trials) {
    if (IsWarmStartTrial(trial)) continue;
    std::string status = TrainingJobStatus(&trial);
    if (status == "Stopping") status = "InProgress";
    if (status == "Failed") status = "NonRetryableError";
    jobs[status] = jobs[status].get<int>() + 1;
    const char* outcome = ObjectiveStatusOf(trial, objective);
    objectives[outcome] = objectives[outcome].get<int>() + 1;
  }
  return {{"TrainingJobStatusCounters", jobs},
          {"ObjectiveStatusCounters", objectives}};
}

json ResourceLimitsJson(const cairn::v1::Study& study,
                        const std::vector<cairn::v1::Trial>& trials) {
  const auto prior = std::count_if(
      trials.begin(), trials.end(),
      [](const cairn::v1::Trial& t) { return IsWarmStartTrial(t); });
  return {{"MaxNumberOfTrainingJobs", study.spec().max_trials() - prior},
          {"MaxParallelTrainingJobs", study.spec().max_parallel_trials()}};
}

absl::StatusOr<json> TuningTrainingJobSummary(const cairn::v1::Study& study,
                                              const cairn::v1::Trial& trial) {
  auto request = TrialTrainingRequest(study, trial);
  if (!request.ok()) return request.status();
  const TuningObjective objective = ObjectiveOfStudy(study);
  const std::string status = TrainingJobStatus(&trial);
  json tuned = json::object();
  for (const cairn::v1::Parameter& p : trial.parameters()) {
    tuned[p.parameter_id()] = request->hyper_parameters().at(p.parameter_id());
  }
  const std::string& name = request->training_job_name();
  json out = {{"TrainingJobName", name},
              {"TrainingJobArn", TrainingJobArn(name)},
              {"TuningJobName", study.display_name()},
              {"CreationTime", EpochSeconds(trial.start_time())},
              {"TrainingJobStatus", status},
              {"TunedHyperParameters", tuned},
              {"ObjectiveStatus", ObjectiveStatusOf(trial, objective)}};
  const JobTimeline timeline = ReadTimeline(trial.job().job_dir());
  if (timeline.training_start) {
    out["TrainingStartTime"] = *timeline.training_start;
  }
  if (trial.has_end_time() && !api::IsPendingState(trial.state())) {
    out["TrainingEndTime"] = EpochSeconds(trial.end_time());
  }
  if (status == "Failed") out["FailureReason"] = JobFailureReason(trial);
  if (std::optional<double> value = ObjectiveOf(trial, objective)) {
    out["FinalHyperParameterTuningJobObjectiveMetric"] = {
        {"Type", objective.minimize ? "Minimize" : "Maximize"},
        {"MetricName", objective.metric_name},
        {"Value", *value}};
  }
  return out;
}

TuningObjective ObjectiveOfStudy(const cairn::v1::Study& study) {
  auto label = study.spec().labels().find(kObjectiveLabel);
  return {
      label == study.spec().labels().end() ? "" : label->second,
      study.spec().metrics_size() == 0 ||
          study.spec().metrics(0).goal() == cairn::v1::MetricSpec::MINIMIZE};
}

json BestTrainingJob(const cairn::v1::Study& study,
                     const std::vector<cairn::v1::Trial>& trials) {
  const cairn::v1::Trial* best =
      BestTrial(trials, ObjectiveOfStudy(study), /*with_prior=*/false);
  if (best == nullptr) return nullptr;
  absl::StatusOr<json> summary = TuningTrainingJobSummary(study, *best);
  return summary.ok() ? *summary : json(nullptr);
}

const cairn::v1::Trial* OverallBestTrial(
    const cairn::v1::Study& study,
    const std::vector<cairn::v1::Trial>& trials) {
  return BestTrial(trials, ObjectiveOfStudy(study), /*with_prior=*/true);
}

}  // namespace cairn::sagemaker
