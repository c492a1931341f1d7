// When a study fails because too many of its trials failed: the explicit
// max_failed_trials, or, for a job study without one, a default criterion.
#ifndef CAIRN_TRIALS_FAILURE_POLICY_H_
#define CAIRN_TRIALS_FAILURE_POLICY_H_

#include <cstdint>
#include <string>

#include "cairn/v1/study.pb.h"
#include "trials/trial_table.h"

namespace cairn {

// Trials of the default criterion: a job study fails when this many first
// trials (lowest ids) all FAILED.
inline constexpr int kDefaultFailedFirstTrials = 3;
// Its failed-trial limit: max(kDefaultMinFailedTrials, max_trials / 4),
// kDefaultMinFailedTrials when max_trials is 0 (unlimited).
inline constexpr int64_t kDefaultMinFailedTrials = 10;

// True with the reason (for inactive_reason) when the study must fail:
//  - max_failed_trials > 0: FAILED trials reached it;
//  - max_failed_trials == 0 and the spec has a job_template with a command:
//    its first kDefaultFailedFirstTrials trials all FAILED, or FAILED trials
//    reached max(kDefaultMinFailedTrials, max_trials / 4).
// Other studies (clients run their trials) never fail by default.
bool FailureLimitReached(const cairn::v1::StudySpec& spec,
                         const TrialTable& trials, std::string* reason);

}  // namespace cairn

#endif  // CAIRN_TRIALS_FAILURE_POLICY_H_
