// A tuning job as a study and back: the study made from a request, the
// training request each trial runs, and the parts of
// DescribeHyperParameterTuningJob computed from the study's trials (each
// trial one training job): the status counters, the summaries of its
// training jobs and the best one.
#ifndef CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_
#define CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"
#include "sagemaker/tuning_job_request.h"

namespace cairn::sagemaker {

// The label value (labels["sagemaker"]) of a tuning job's study, and the
// label holding its objective's MetricName as given.
inline constexpr char kTuningJobLabel[] = "tuning-job";
inline constexpr char kObjectiveLabel[] = "sagemaker-objective";

// The study to create for a validated tuning-job request: the training
// definition's study (TrainingJobStudy: container template, the
// definition in sagemaker_training_job) with the tuning job's name, search
// space, objective metric, algorithm, early stopping and limits.
cairn::v1::Study TuningJobStudy(const TuningJobRequest& request);

// The training request trial `trial` of `study` runs: for a tuning job's
// study the definition renamed TuningTrainingJobName and with
// TrialHyperParameters; for a training job's study its request as is.
absl::StatusOr<cairn::v1::SageMakerCreateTrainingJobRequest>
TrialTrainingRequest(const cairn::v1::Study& study,
                     const cairn::v1::Trial& trial);

// The parts of a training job name TuningTrainingJobName made.
struct TuningTrainingJobRef {
  std::string tuning_name;
  int64_t trial_id = 0;
};

// `name`'s parts if it has TuningTrainingJobName's shape
// (<tuning name>-NNN-<8 hex>); nullopt otherwise. The caller still checks
// that the name is the one TuningTrainingJobName gives (the hash).
std::optional<TuningTrainingJobRef> ParseTuningTrainingJobName(
    absl::string_view name);

// The training job trial `trial` of tuning job study `study` runs, as a
// training job's study would hold it (for the training job views): named
// and with the request of TrialTrainingRequest, created when the trial
// was. NotFound for a warm start's prior trial (no job of this tuning job
// ran it).
absl::StatusOr<cairn::v1::Study> TuningTrainingJobStudy(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial);

// DescribeTrainingJob's response for trial `trial` of tuning job study
// `study`: the trial's own request (TrialTrainingRequest: its name and
// HyperParameters), status, metrics and artifacts like any training job's,
// with TuningJobArn. NotFound for a warm start's prior trial (no job of
// this tuning job ran it).
absl::StatusOr<nlohmann::json> DescribeTuningTrainingJobJson(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial);

// arn:aws:sagemaker:local:000000000000:hyper-parameter-tuning-job/<name>.
std::string TuningJobArn(const std::string& name);

// Whether `study` is a tuning job's (labels["sagemaker"] == kTuningJobLabel).
bool IsTuningJobStudy(const cairn::v1::Study& study);

// HyperParameterTuningJobStatus of a tuning job's study and its `trials`:
// ACTIVE InProgress, COMPLETED Completed, FAILED Failed, INACTIVE
// (StopHyperParameterTuningJob) Stopping while a trial is pending or its
// job still runs (api::HasLiveJob), then Stopped.
std::string TuningJobStatus(const cairn::v1::Study& study,
                            const std::vector<cairn::v1::Trial>& trials);

// What the view needs of the tuning job besides its trials.
struct TuningObjective {
  std::string metric_name;  // HyperParameterTuningJobObjective.MetricName
  bool minimize = true;
};

// The objective of a tuning job's study (kObjectiveLabel and its metric's
// goal).
TuningObjective ObjectiveOfStudy(const cairn::v1::Study& study);

// {"TrainingJobStatusCounters": {Completed, InProgress, RetryableError,
// NonRetryableError, Stopped}, "ObjectiveStatusCounters": {Succeeded,
// Pending, Failed}} of `trials`. A Failed job counts as NonRetryableError,
// a Stopping one InProgress, an early-stopped one Stopped; a job's
// objective Succeeded when it Completed or Stopped with the objective's
// metric in its final measurement, is Pending while it runs and Failed
// otherwise. Each group adds up to the number of trials. Prior trials of a
// warm start (IsWarmStartTrial) are not the job's training jobs and count
// nowhere, here and below.
nlohmann::json TuningCounters(const std::vector<cairn::v1::Trial>& trials,
                              const TuningObjective& objective);

// ResourceLimits {MaxNumberOfTrainingJobs, MaxParallelTrainingJobs} as
// requested: the study's max_trials less the prior trials among `trials`.
nlohmann::json ResourceLimitsJson(const cairn::v1::Study& study,
                                  const std::vector<cairn::v1::Trial>& trials);

// The HyperParameterTrainingJobSummary of trial `trial` of tuning job
// study `study`: TrainingJobName (TuningTrainingJobName), TrainingJobArn,
// TuningJobName, CreationTime (when the trial was made), TrainingStartTime
// (its container's start), TrainingEndTime, TrainingJobStatus,
// TunedHyperParameters (strings), FailureReason of a Failed job,
// ObjectiveStatus and, once it has an objective value,
// FinalHyperParameterTuningJobObjectiveMetric {Type, MetricName, Value}.
absl::StatusOr<nlohmann::json> TuningTrainingJobSummary(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial);

// BestTrainingJob: the summary of the Completed job whose objective value
// is lowest (Minimize) or highest (Maximize), the earlier trial on a tie;
// null when no job Completed with an objective value yet.
nlohmann::json BestTrainingJob(const cairn::v1::Study& study,
                               const std::vector<cairn::v1::Trial>& trials);

// The trial OverallBestTrainingJob names: as BestTrainingJob's, but
// among the prior trials of a warm start too (its parents' jobs); nullptr
// when none.
const cairn::v1::Trial* OverallBestTrial(
    const cairn::v1::Study& study, const std::vector<cairn::v1::Trial>& trials);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_
