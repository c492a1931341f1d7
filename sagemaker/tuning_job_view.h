// The parts of DescribeHyperParameterTuningJob computed from the tuning
// job's study trials (each trial one training job, see
// tuning_job_request.h): the status counters and the best training job.
#ifndef CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_
#define CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_

#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

// What the view needs of the tuning job besides its trials.
struct TuningObjective {
  std::string metric_name;  // HyperParameterTuningJobObjective.MetricName
  bool minimize = true;
};

// {"TrainingJobStatusCounters": {Completed, InProgress, RetryableError,
// NonRetryableError, Stopped}, "ObjectiveStatusCounters": {Succeeded,
// Pending, Failed}} of `trials`. A Failed job counts as NonRetryableError;
// a Completed job's objective Succeeded when its final measurement holds
// the objective's metric and Failed otherwise (as do a failed or stopped
// job's); a job still in progress is Pending. Each group adds up to the
// number of trials.
nlohmann::json TuningCounters(const std::vector<cairn::v1::Trial>& trials,
                              const TuningObjective& objective);

// BestTrainingJob: the Completed job whose objective value is lowest
// (Minimize) or highest (Maximize), the earlier trial on a tie, with
// TrainingJobName (TuningTrainingJobName of `tuning_name` and
// `study_name`), TrainingJobStatus, TunedHyperParameters (strings) and
// FinalHyperParameterTuningJobObjectiveMetric {Type, MetricName, Value}.
// null when no job has an objective value yet.
nlohmann::json BestTrainingJob(const std::vector<cairn::v1::Trial>& trials,
                               const TuningObjective& objective,
                               const std::string& tuning_name,
                               const std::string& study_name);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TUNING_JOB_VIEW_H_
