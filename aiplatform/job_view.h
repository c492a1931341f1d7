// A job's Job resource as AI Platform returns it, derived from its stored
// record and its study's trials: state (QUEUED ... CANCELLED), times,
// errorMessage and trainingOutput. A pure function of its inputs.
#ifndef CAIRN_AIPLATFORM_JOB_VIEW_H_
#define CAIRN_AIPLATFORM_JOB_VIEW_H_

#include <vector>

#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"

namespace cairn::aiplatform {

// errorMessage of a job a user cancelled.
inline constexpr char kUserCancelReason[] =
    "cancelled by a user request (cairn jobs cancel)";

// The Job of `record`, whose study is `study` with `trials` (with their
// measurements, for allMetrics). Trials listed in record.prior_trial_ids are
// left out.
//  - state: CANCELLING while a cancelled job still has a process, then
//    CANCELLED (errorMessage: record.cancel_reason, or kUserCancelReason);
//    FAILED when the study failed or ended without a successful trial;
//    SUCCEEDED when it ended with one; else QUEUED (no trial yet), PREPARING
//    (trials wait for a slot) or RUNNING;
//  - trainingOutput.trials (tuning jobs only), completedTrialCount
//    (SUCCEEDED trials), isHyperparameterTuningJob, hyperparameterMetricTag.
cairn::v1::Job JobView(const cairn::v1::JobRecord& record,
                       const cairn::v1::Study& study,
                       const std::vector<cairn::v1::Trial>& trials);

// Whether `state` is final (SUCCEEDED, FAILED, CANCELLED).
bool IsFinal(cairn::v1::Job::State state);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_VIEW_H_
