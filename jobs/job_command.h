// The command line and environment of a trial's job, as AI Platform Training
// sets them: the template's command with the trial's parameters as
// --name=value and --job-dir=DIR; the template's env plus CAIRN_*,
// CLOUD_ML_*, TF_CONFIG, PyTorch's MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK and CUDA_VISIBLE_DEVICES. One JobSpec per replica (jobs/tf_config.h):
// a one-process trial is a cluster of one master. Also where a job dir keeps
// the job's logs and hypertune files.
#ifndef CAIRN_JOBS_JOB_COMMAND_H_
#define CAIRN_JOBS_JOB_COMMAND_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cairn/v1/study.pb.h"
#include "jobs/executor.h"
#include "jobs/tf_config.h"

namespace cairn::jobs {

// Where one attempt of a trial runs.
struct JobContext {
  std::string server_address;  // CAIRN_SERVER: how the job reaches cairnd.
  std::string study_name;      // CAIRN_STUDY, e.g. "studies/3".
  std::filesystem::path job_dir;
  bool resume = false;  // A restart: sets CAIRN_RESUME=1.
  // CAIRN_TOKEN: the job's own token (only for its trial; CAIRN_TOKEN_FILE
  // is then set empty); "" sets none.
  std::string token;
  // CLOUD_ML_HP_METRIC_TAG: the study's (first) metric id.
  std::string metric_tag;
  // CAIRN_TLS_CA: the CA to verify cairnd at server_address; "" sets none.
  std::string server_tls_ca;
  // CAIRN_PYTHON_SDK: the directory holding the `cairn` package
  // (jobs/python_sdk.h), also put first on PYTHONPATH; "" sets neither.
  std::string python_sdk;
};

// The master's stdout and stderr, appended across attempts (what
// ReadTrialLogs serves).
std::filesystem::path JobLogPath(const std::filesystem::path& job_dir);
// The master's cloudml-hypertune metrics file (CLOUD_ML_HP_METRIC_FILE),
// the one cairnd collects.
std::filesystem::path HypertunePath(const std::filesystem::path& job_dir);
// Log and hypertune file of another replica (`name` as ReplicaTask::Name):
// JOB_DIR/NAME.log and JOB_DIR/NAME.hypertune.metrics. The latter is never
// collected: only the master's metrics count.
std::filesystem::path ReplicaLogPath(const std::filesystem::path& job_dir,
                                     const std::string& name);
std::filesystem::path ReplicaHypertunePath(const std::filesystem::path& job_dir,
                                           const std::string& name);

// The JobSpecs of `trial`'s `replicas` (ExpandReplicas then PlaceReplicas),
// in their order. Each runs in cairnd's working directory (working_dir
// empty), so relative paths in the command resolve there; the job dir is
// --job-dir. Every replica gets the same argv and CAIRN_STUDY,
// CAIRN_TRIAL_ID, CAIRN_JOB_DIR, CAIRN_RESUME, CAIRN_REPLICA (its name),
// CAIRN_PYTHON_SDK and PYTHONPATH (the SDK, then the template's PYTHONPATH),
// CLOUD_ML_JOB_ID (tmpl.ai_platform_job_id, else the study name),
// CLOUD_ML_TRIAL_ID, CLOUD_ML_HP_METRIC_TAG, its own TF_CONFIG (also as
// CLUSTER_SPEC in a container, as AI Platform sets both), PyTorch variables
// and GPUs. Only the master gets CAIRN_SERVER and CAIRN_TOKEN
// and the collected hypertune file, so only its metrics count: the others
// report to their own files (ReplicaHypertunePath) and log to
// ReplicaLogPath.
std::vector<JobSpec> MakeJobSpecs(const cairn::v1::TrialJobTemplate& tmpl,
                                  const cairn::v1::Trial& trial,
                                  const JobContext& context,
                                  const std::vector<ReplicaTask>& replicas);

// Why a job template may not set the environment variable `name`, or "" if
// it may: the dynamic loader's LD_* (LD_PRELOAD, LD_LIBRARY_PATH, ...) and
// the variables cairnd sets for jobs (CAIRN_*, CLOUD_ML_*, TF_CONFIG,
// CLUSTER_SPEC, CUDA_VISIBLE_DEVICES, MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK).
std::string ReservedVariableReason(absl::string_view name);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_COMMAND_H_
