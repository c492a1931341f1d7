// CreateHyperParameterTuningJob's request mapped onto a Cairn study: the
// tuning job is ONE study whose trials are its training jobs. The study's
// spec carries the search space, objective, algorithm, early stopping and
// limits; the training definition becomes a CreateTrainingJob request
// (validated like one) whose HyperParameters are StaticHyperParameters.
// Every refusal is InvalidArgument (ValidationException) naming the field
// and its value.
//
//   Strategy Bayesian GP_BANDIT, Random RANDOM_SEARCH, Grid GRID_SEARCH,
//            Hyperband RANDOM_SEARCH with ASHA early stopping
//   ScalingType Auto (or none) SCALE_TYPE_UNSPECIFIED (linear), Linear
//            UNIT_LINEAR_SCALE, Logarithmic UNIT_LOG_SCALE,
//            ReverseLogarithmic UNIT_REVERSE_LOG_SCALE (min > 0 for both)
//   ResourceLimits MaxNumberOfTrainingJobs max_trials,
//            MaxParallelTrainingJobs max_parallel_trials
//   TrainingJobEarlyStoppingType Auto median stopping
#ifndef CAIRN_SAGEMAKER_TUNING_JOB_REQUEST_H_
#define CAIRN_SAGEMAKER_TUNING_JOB_REQUEST_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"
#include "cairn/v1/study.pb.h"
#include "sagemaker/warm_start.h"

namespace cairn::sagemaker {

// SageMaker's limits on a tuning job.
inline constexpr int kMaxTuningJobNameLength = 32;
inline constexpr int kMaxTrainingJobsPerTuningJob = 500;
inline constexpr int kMaxParallelTrainingJobs = 100;
inline constexpr int kMaxParameterRanges = 30;

struct TuningJobRequest {
  std::string name;  // HyperParameterTuningJobName
  // parameters, one MINIMIZE/MAXIMIZE metric (the objective's metric id,
  // see MetricIdOf), algorithm, early_stopping, max_trials,
  // max_parallel_trials.
  cairn::v1::StudySpec spec;
  // TrainingJobDefinition as a training job named like the tuning job,
  // HyperParameters = StaticHyperParameters.
  cairn::v1::SageMakerCreateTrainingJobRequest training;
  // HyperParameterTuningJobObjective.MetricName as given.
  std::string objective_metric_name;
  // WarmStartConfig, validated on its own (the parents are checked when
  // the job is created: WarmStartTrials).
  std::optional<WarmStartConfig> warm_start;
};

// Parses and validates a CreateHyperParameterTuningJob body. Members Cairn
// does not run (TrainingJobDefinitions, TuningJobCompletionCriteria, ...)
// are refused by name.
absl::StatusOr<TuningJobRequest> ParseCreateTuningJob(absl::string_view body);

// The training job name of trial `trial_id` of the study `study_name`
// behind tuning job `tuning_name`, shaped like SageMaker's:
// <tuning_name>-NNN-<8 hex>, NNN the trial id (at least 3 digits) and the
// hex a stable hash of study and trial, so the name is the same after a
// restart and never that of another tuning job's trial.
std::string TuningTrainingJobName(absl::string_view tuning_name,
                                  absl::string_view study_name,
                                  int64_t trial_id);

// `x` as a hyperparameter or range bound string: an integral number
// without a fraction, others in shortest round-trip form.
std::string NumberText(double x);

// hyperparameters.json of a trial: `static_hyperparameters` plus each of
// the trial's parameters as a string (integral numbers without a
// fraction, others in shortest round-trip form). InvalidArgument if a
// parameter has no number or string value.
absl::StatusOr<std::map<std::string, std::string>> TrialHyperParameters(
    const google::protobuf::Map<std::string, std::string>&
        static_hyperparameters,
    const cairn::v1::Trial& trial);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TUNING_JOB_REQUEST_H_
