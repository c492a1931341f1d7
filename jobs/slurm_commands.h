// The Slurm client tools' command lines and output, as pure functions so
// that they are tested without a cluster: sbatch's argv for a JobSpec,
// squeue's output parsed, and Slurm job states mapped to job exits.
#ifndef CAIRN_JOBS_SLURM_COMMANDS_H_
#define CAIRN_JOBS_SLURM_COMMANDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jobs/container_command.h"
#include "jobs/executor.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

// Site options of `cairnd --executor=slurm`.
struct SlurmOptions {
  std::string partition;                // --partition; "" = Slurm's default.
  std::string account;                  // --account; "" = none.
  std::vector<std::string> extra_args;  // Appended to every sbatch, as is.
  // Slurm's config (SLURM_CONF of the client tools); "" = cairnd's own
  // SLURM_CONF, else Slurm's default.
  std::string slurm_conf;
  // Where sbatch, squeue and scancel are; "" = cairnd's PATH.
  std::string bin_dir;
  // At most one squeue per this interval, for all of cairnd's jobs.
  absl::Duration status_interval = absl::Milliseconds(250);
  // Signal sent this long before the time limit (sbatch --signal); also
  // the time a multi-replica job's replicas get between SIGTERM and SIGKILL
  // once its master has exited.
  absl::Duration grace_period = absl::Seconds(10);
  // The program a multi-replica job runs in its batch script and tasks
  // (`--slurm-batch` / `--slurm-replica`, jobs/slurm_launch.h): cairnd,
  // at the same path on every node. "" = this program (/proc/self/exe).
  std::string launcher;
  // Container jobs (jobs/slurm_container.h): podman as named here (a name
  // is looked up on each node's PATH; "" = container jobs refused), the
  // pull policy, and data_dir for the cairn.data_dir label. grace_period
  // and state_dir are not used (the SlurmOptions' grace applies).
  ContainerOptions containers;
};

// Environment variable names a job may not set under Slurm: sbatch reads
// SBATCH_* and SLURM_* as its own options, so a job's env must not carry
// them. Returns why `name` is refused, or "".
std::string SlurmReservedVariableReason(absl::string_view name);

// sbatch's argv for `spec`: --parsable, a job name, --output (the log,
// --open-mode=append), --chdir, --requeue, --export=ALL (the job's whole
// environment is sbatch's, see SlurmEnvironment), --gres=gpu:N, --time
// (whole minutes, rounded up), --signal=B:TERM@grace, --partition,
// --account, --uid/--gid when user.switch_user, the extra args, then
// `script` (which execs "$@") and the job's argv.
std::vector<std::string> SbatchArgv(const std::string& sbatch,
                                    const SlurmOptions& options,
                                    const JobUser& user, const JobSpec& spec,
                                    const std::string& script);

// sbatch's argv for a multi-replica trial attempt: one job with one task per
// replica (`specs`, the master first; its name, log, working dir and time
// limit are the job's), --ntasks=specs.size() and --spread-job (the tasks go
// to as many nodes as Slurm can give, evenly), --gpus-per-task=N when a
// replica asks for GPUs (N: the most any replica asks for, since one step
// gives every task the same), the other options as SbatchArgv, then `script`
// and `launcher` (the argv of the program that runs srun, see
// jobs/slurm_launch.h).
std::vector<std::string> SbatchGroupArgv(
    const std::string& sbatch, const SlurmOptions& options, const JobUser& user,
    const std::vector<JobSpec>& specs, const std::string& script,
    const std::vector<std::string>& launcher);

// srun's argv inside a multi-replica batch job: one step of `tasks` tasks,
// --kill-on-bad-exit=1 (a task ending with a non-zero code or a signal ends
// the whole step, so the group restarts as one), stdin from nowhere, each
// task running `task_argv` (which finds its replica by SLURM_PROCID).
std::vector<std::string> SrunArgv(const std::string& srun, int tasks,
                                  const std::vector<std::string>& task_argv);

// The environment sbatch runs with, which it hands to the job: the clean
// base of local jobs (PATH, HOME, USER, LOGNAME, LANG), SLURM_CONF when set,
// then spec.env without CUDA_VISIBLE_DEVICES (Slurm sets it from --gres).
std::vector<std::string> SlurmEnvironment(const JobUser& user,
                                          const JobSpec& spec,
                                          const std::string& slurm_conf);

// The squeue format cairnd uses, and one job of its output.
inline constexpr char kSqueueFormat[] =
    "JobID:|,State:|,Reason:|,RestartCnt:|,exit_code:|";
struct SlurmJobStatus {
  int64_t id = 0;
  std::string state;    // e.g. "RUNNING", "NODE_FAIL".
  std::string reason;   // e.g. "None", "NonZeroExitCode".
  int restarts = 0;     // Requeues so far.
  int wait_status = 0;  // Raw wait status of the batch script.
};

// Parses `squeue -h -O kSqueueFormat` output, by job id. InvalidArgument
// on a malformed line (the message quotes it).
absl::StatusOr<std::map<int64_t, SlurmJobStatus>> ParseSqueue(
    absl::string_view out);

// The exit of a job in `status`, or nullopt while it is pending, running or
// requeued. COMPLETED/FAILED: the script's exit code or signal; CANCELLED,
// PREEMPTED: SIGTERM; TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL,
// DEADLINE: SIGKILL; a failure with no code (e.g. a launch failure): exit
// code 1. Every exit's detail is the state and reason.
std::optional<JobExit> SlurmExit(const SlurmJobStatus& status);

// The job id in sbatch --parsable's output ("123" or "123;cluster").
absl::StatusOr<int64_t> ParseSbatchId(absl::string_view out);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_SLURM_COMMANDS_H_
