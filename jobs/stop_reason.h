// Why the job runner ends a job before it exits on its own. The text of a
// reason is what the job record's message and the runner's log show, and
// what users and tests read: it is part of the interface.
#ifndef CAIRN_JOBS_STOP_REASON_H_
#define CAIRN_JOBS_STOP_REASON_H_

#include "absl/strings/string_view.h"

namespace cairn::jobs {

enum class StopReason {
  kTimeout,    // Ran longer than job_template.max_running_time.
  kCancelled,  // Its study stopped, or the trial was deleted with it.
  kStopped,    // Its trial is STOPPING (early stopping or a user), or its
               // trial ended and a user asked to stop the job still running.
};

// The failure reason of a trial whose job ran longer than
// job_template.max_running_time.
inline constexpr char kTimeoutMessage[] =
    "timeout: ran longer than job_template.max_running_time";

// "timeout", "cancelled" or "stopped".
absl::string_view StopReasonText(StopReason reason);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_STOP_REASON_H_
