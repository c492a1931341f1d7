// What a study's job template means on this cairnd: where its trials' job
// dirs lie (under the jobs root) and whether it fits (jobs root, GPU count).
// The structural checks of a template (command, env names, non-negative
// counts) are tuner::ValidateStudySpec's; these are the ones that depend on
// how cairnd was started.
#ifndef CAIRN_JOBS_JOB_TEMPLATE_H_
#define CAIRN_JOBS_JOB_TEMPLATE_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"

namespace cairn::jobs {

// Checks that a study's job template fits this cairnd: its job_dir lies
// inside `jobs_root` and gpus_per_trial is at most `gpus`. OK for a spec
// without a job template. InvalidArgument naming the field and value.
absl::Status ValidateJobPlacement(const std::string& jobs_root, int gpus,
                                  const cairn::v1::StudySpec& spec);

// The job dir of trial `trial_id` of study `study_id`, created if missing:
// <job_dir or jobs_root/study-ID>/trial-ID. FailedPrecondition when the
// template's job_dir is outside `jobs_root` or the directory cannot be
// created.
absl::StatusOr<std::filesystem::path> CreateTrialJobDir(
    const std::string& jobs_root, const cairn::v1::StudySpec& spec,
    int64_t study_id, int64_t trial_id);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_TEMPLATE_H_
