// Checks of a study's job_template that need nothing but the spec; the
// checks against the machine (job dirs, GPU count) are jobs::
// ValidateJobTemplate's.
//
// Pure and thread-safe.
#ifndef CAIRN_TUNER_JOB_TEMPLATE_VALIDATION_H_
#define CAIRN_TUNER_JOB_TEMPLATE_VALIDATION_H_

#include "absl/status/status.h"
#include "cairn/v1/study.pb.h"

namespace cairn::tuner {

// OK when `spec` has no job_template. Otherwise checks: a non-empty
// command, gpus_per_trial >= 0, max_restarts >= 0, a non-negative
// max_running_time, env names non-empty without '=', and, when replicas
// are given, each type at most once, exactly one MASTER group of count 1,
// at most 64 replicas a group, 16 GPUs a replica and 128 replicas in all,
// and gpus_per_trial 0 (GPUs come from gpus_per_replica). Returns OK or
// InvalidArgument naming the first problem's field path.
absl::Status ValidateJobTemplateShape(const cairn::v1::StudySpec& spec);

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_JOB_TEMPLATE_VALIDATION_H_
