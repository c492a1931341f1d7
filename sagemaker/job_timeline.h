// When a SageMaker training job's container started, when it exited and
// when its outputs were packed: what SageMaker's TrainingStartTime,
// SecondaryStatusTransitions and TrainingTimeInSeconds need and a trial
// does not keep (its start_time is when it was queued). TrainingRunHooks
// records each moment in the job's job dir as JOB_DIR/ml/timeline.json,
// a file of cairnd's own user in a directory of cairnd's own user that the
// job cannot write; the views read it back.
//
// A restart of the job (a new attempt) keeps the first start and forgets
// the earlier attempt's exit, so the job trains from its first start until
// its last exit.
#ifndef CAIRN_SAGEMAKER_JOB_TIMELINE_H_
#define CAIRN_SAGEMAKER_JOB_TIMELINE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace cairn::sagemaker {

// Epoch seconds of each moment; nullopt until it happened.
struct JobTimeline {
  std::optional<double> training_start;  // the first container started
  std::optional<double> exited;          // the last attempt's containers
  std::optional<double> packed;          // model.tar.gz written after that
};

enum class TimelineEvent { kStarted, kExited, kPacked };

// Records `event` at `now` in `job_dir`'s timeline. Writes through no
// symbolic link: JOB_DIR/ml must be a directory of cairnd's user (the job
// owns JOB_DIR and could have put a link there), else FailedPrecondition.
// The file is replaced atomically.
absl::Status RecordTimeline(const std::string& job_dir, TimelineEvent event,
                            double now);

// The timeline of `job_dir`; all nullopt when there is none (a job dir
// from before timelines, or none yet) or it is not one of cairnd's
// well-formed files.
JobTimeline ReadTimeline(const std::string& job_dir);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_JOB_TIMELINE_H_
