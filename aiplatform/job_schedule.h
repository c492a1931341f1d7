// scheduling.maxRunningTime and scheduling.maxWaitTime, as AI Platform
// applies them: a job RUNNING longer than maxRunningTime (default 7 days,
// counted from its start) is cancelled, and so is a job still QUEUED or
// PREPARING after maxWaitTime (no limit unless set; at least 1800 s)
// counted from its creation. Pure functions of their inputs.
#ifndef CAIRN_AIPLATFORM_JOB_SCHEDULE_H_
#define CAIRN_AIPLATFORM_JOB_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cairn/v1/aiplatform.pb.h"

namespace cairn::aiplatform {

// scheduling.maxRunningTime's default: 7 days.
inline constexpr int64_t kDefaultMaxRunningSeconds = 604800;
// scheduling.maxWaitTime's least value.
inline constexpr int64_t kMinMaxWaitSeconds = 1800;

// InvalidArgument naming the field and value for a negative or zero
// maxRunningTime or a maxWaitTime under kMinMaxWaitSeconds.
absl::Status ValidateScheduling(const cairn::v1::Scheduling& scheduling);

// Why `job` (as JobView derives it, with `training_input` as submitted)
// must be cancelled at `now`, e.g. "the job ran longer than
// scheduling.maxRunningTime (2s)"; empty when it may go on.
std::string ScheduleViolation(const cairn::v1::Job& job, absl::Time now);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_SCHEDULE_H_
