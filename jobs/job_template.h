// What a study's job template means on this cairnd: where its trials' job
// dirs lie (under the jobs root or a root the admin allowed) and whether it
// fits (roots, GPU count, environment). The structural checks of a template
// (command, env names, non-negative counts) are tuner::ValidateStudySpec's;
// these are the ones that depend on how cairnd was started or that guard
// the machine from a job.
#ifndef CAIRN_JOBS_JOB_TEMPLATE_H_
#define CAIRN_JOBS_JOB_TEMPLATE_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

// Where job dirs may lie.
struct JobRoots {
  // --jobs-root: a template without job_dir gets jobs_root/study-ID, and a
  // relative job_dir resolves here. Required.
  std::string jobs_root;
  // --allowed-job-dirs: further roots an absolute job_dir may lie in.
  std::vector<std::string> allowed_job_dirs;
};

// This machine's memory in bytes (0 if unknown): a container's memory limit
// may not exceed it.
int64_t PhysicalMemoryBytes();

// Checks that a study's job template fits this cairnd. OK for a spec
// without a job template. InvalidArgument naming the field:
//  - job_template.env sets a variable ReservedVariableReason refuses
//    (LD_*, CAIRN_*, ...), naming the variable;
//  - job_template.job_dir does not resolve strictly inside the jobs root or
//    an allowed dir (the real path of its longest existing prefix, so ".."
//    and symbolic links count where they lead); a relative one resolves in
//    the jobs root, never in a client's working directory. The message
//    names "trainingInput.jobDir" for an AI Platform job's template (the field
//    its user wrote), else "job_template.job_dir";
//  - job_template.gpus_per_trial exceeds `gpus`;
//  - a job_template.container mount's host_path lies outside those roots,
//    or a container's memory_bytes exceeds this machine's memory.
// FailedPrecondition when the template names a container image and
// `container_runtime` (the runtime's path) is "".
absl::Status ValidateJobTemplate(const JobRoots& roots, int gpus,
                                 const cairn::v1::StudySpec& spec,
                                 const std::string& container_runtime = "");

// The job dir of trial `trial_id` of study `study_id`, created if missing
// and owned by `owner` when owner.switch_user (cairnd is root):
// <job_dir or jobs_root/study-ID>/trial-ID; for the study of an AI Platform
// job (job_template.ai_platform_job_id set) <job_dir>/ID, or <job_dir>
// itself when the spec has no parameters (a plain training job). The placement
// is checked again (links may have changed since the study was created).
// FailedPrecondition when it lies outside the roots or cannot be created.
absl::StatusOr<std::filesystem::path> CreateTrialJobDir(
    const JobRoots& roots, const cairn::v1::StudySpec& spec, int64_t study_id,
    int64_t trial_id, const JobUser& owner);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_TEMPLATE_H_
