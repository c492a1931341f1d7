// Small facts about trial states, in one place for every component.
#ifndef CAIRN_API_TRIAL_STATES_H_
#define CAIRN_API_TRIAL_STATES_H_

#include "cairn/v1/study.pb.h"

namespace cairn::api {

// REQUESTED, ACTIVE and STOPPING trials have no result yet.
bool IsPendingState(cairn::v1::Trial::State state);

// True while the trial's job has a process (or container, or cluster job)
// that the job runner still waits for: its record says RUNNING or STOPPING.
// The trial itself may have ended meanwhile (completed through the API).
bool HasLiveJob(const cairn::v1::Trial& trial);

// Trial.metadata key holding why the early-stopping rule stopped the trial
// (set when it becomes STOPPING; kept when it completes).
inline constexpr char kEarlyStoppingReasonKey[] = "early_stopping_reason";

}  // namespace cairn::api

#endif  // CAIRN_API_TRIAL_STATES_H_
