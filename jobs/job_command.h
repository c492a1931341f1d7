// The command line and environment of a trial's job, as AI Platform Training
// sets them: the template's command with the trial's parameters as
// --name=value and --job-dir=DIR; the template's env plus CAIRN_*,
// CLOUD_ML_*, TF_CONFIG and CUDA_VISIBLE_DEVICES. Also where a job dir keeps
// the job's log and hypertune file.
#ifndef CAIRN_JOBS_JOB_COMMAND_H_
#define CAIRN_JOBS_JOB_COMMAND_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cairn/v1/study.pb.h"
#include "jobs/executor.h"

namespace cairn::jobs {

// Where one attempt of a trial runs.
struct JobContext {
  std::string server_address;  // CAIRN_SERVER: how the job reaches cairnd.
  std::string study_name;      // CAIRN_STUDY, e.g. "studies/3".
  std::filesystem::path job_dir;
  std::vector<int> gpus;  // CUDA_VISIBLE_DEVICES.
  bool resume = false;    // A restart: sets CAIRN_RESUME=1.
  // CAIRN_TOKEN: the job's own token (only for its trial; CAIRN_TOKEN_FILE
  // is then set empty); "" sets none.
  std::string token;
};

// The job's stdout and stderr, appended across attempts.
std::filesystem::path JobLogPath(const std::filesystem::path& job_dir);
// The cloudml-hypertune metrics file (CLOUD_ML_HP_METRIC_FILE).
std::filesystem::path HypertunePath(const std::filesystem::path& job_dir);

// The JobSpec of `trial` under `tmpl`. It runs in cairnd's working directory
// (working_dir empty), so relative paths in the command resolve there; its
// own directory is --job-dir. Its log is JobLogPath(context.job_dir).
JobSpec MakeJobSpec(const cairn::v1::TrialJobTemplate& tmpl,
                    const cairn::v1::Trial& trial, const JobContext& context);

// Why a job template may not set the environment variable `name`, or "" if
// it may: the dynamic loader's LD_* (LD_PRELOAD, LD_LIBRARY_PATH, ...) and
// the variables cairnd sets for jobs (CAIRN_*, CLOUD_ML_*, TF_CONFIG,
// CUDA_VISIBLE_DEVICES).
std::string ReservedVariableReason(absl::string_view name);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_COMMAND_H_
