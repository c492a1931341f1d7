// A training job's times as DescribeTrainingJob gives them:
// SecondaryStatusTransitions, TrainingStartTime (when its container
// started, not when it was queued), TrainingEndTime,
// TrainingTimeInSeconds, BillableTimeInSeconds (the same: no spot
// training) and LastModifiedTime (the latest status change), made from
// the job's moments (job_timeline.h) and its status.
//
// Transitions, each ending when the next starts (the last one of an ended
// job ends when it starts):
//   Starting   from CreationTime       "Starting the training job"
//   Training   from the container start "Training in progress"
//   then by TrainingJobStatus, from the container's exit:
//   InProgress Uploading               "Uploading generated training model"
//   Completed  Uploading, then Completed once packed
//   Stopped    Stopping, then Stopped or MaxRuntimeExceeded once packed
//   Failed     Failed at the end
// A Stopping job whose container has not exited yet shows no Stopping
// transition (Cairn does not record when the stop was asked).
#ifndef CAIRN_SAGEMAKER_TRAINING_JOB_TIMES_H_
#define CAIRN_SAGEMAKER_TRAINING_JOB_TIMES_H_

#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "sagemaker/job_timeline.h"

namespace cairn::sagemaker {

struct JobMoments {
  double created = 0;           // CreationTime
  JobTimeline timeline;         // the container's start, exit, packing
  std::optional<double> ended;  // when the job ended (its trial's end)
};

// How the job stands: its TrainingJobStatus and SecondaryStatus, and
// what the Stopping transition says besides (why an early stop stopped
// it; may be empty).
struct JobStanding {
  std::string status;
  std::string secondary;
  std::string stop_detail;
};

// The SecondaryStatusTransitions list.
nlohmann::json SecondaryStatusTransitions(const JobMoments& moments,
                                          const JobStanding& standing);

// Sets the time members on `out` (a Describe response): those above,
// each only once known.
void AddJobTimes(const JobMoments& moments, const JobStanding& standing,
                 nlohmann::json* out);

// LastModifiedTime: the start of the latest transition.
double LastModifiedTime(const JobMoments& moments, const JobStanding& standing);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TRAINING_JOB_TIMES_H_
