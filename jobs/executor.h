// Executors run training jobs. One interface, so that a cluster executor
// (Slurm) can be added beside LocalProcessExecutor without touching the job
// runner.
#ifndef CAIRN_JOBS_EXECUTOR_H_
#define CAIRN_JOBS_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/job_user.h"
#include "util/clock.h"

namespace cairn::jobs {

// A host directory bind-mounted into a container job.
struct ContainerMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
};

// How a job runs in a container image (jobs/container_executor.h). The
// JobSpec's argv then follows the image (replacing its CMD), and its env,
// log and job dir keep their meaning inside the container.
struct ContainerJob {
  std::string image;
  // Replaces the image's ENTRYPOINT when non-empty.
  std::vector<std::string> entrypoint;
  std::vector<ContainerMount> mounts;
  // Limits; 0 means unlimited.
  double cpus = 0;
  int64_t memory_bytes = 0;
  int64_t pids_limit = 0;
  // Device nodes given to the container (the replica's GPUs).
  std::vector<std::string> devices;
  // Names the attempt: cairn.study, cairn.trial, cairn.attempt,
  // cairn.replica (the executor adds cairn.data_dir). Also the container's
  // name, so that one attempt never runs twice.
  std::map<std::string, std::string> labels;
};

struct JobSpec {
  // argv[0] is resolved through the job's PATH when it has no '/'. Never run
  // through a shell.
  std::vector<std::string> argv;
  // Added to (and overriding) the executor's clean base environment; the
  // job never sees the executor's own environment.
  std::map<std::string, std::string> env;
  // Working directory; must exist.
  std::string working_dir;
  // stdout and stderr are appended here.
  std::string log_path;
  // For cluster executors (jobs/slurm_executor.h), which schedule GPUs and
  // time themselves; the local executor ignores them. A name tying the job
  // to its study and trial; GPUs the job needs (the local executor gets
  // them as CUDA_VISIBLE_DEVICES in env); the attempt's wall-clock limit;
  // how many processes the trial runs (job_template.replicas; 1 without).
  std::string name;
  int gpus = 0;
  absl::Duration time_limit = absl::InfiniteDuration();
  int replicas = 1;
  // Set: the job runs in a container (only a container executor runs it).
  std::optional<ContainerJob> container;
};

// Identifies a started job for its executor.
struct JobHandle {
  int64_t id = 0;           // Executor-specific (local: the pid).
  int64_t pid = 0;          // Process id where meaningful, else 0.
  int64_t start_ticks = 0;  // Process start time (clock ticks since boot).
};

struct JobExit {
  int exit_code = 0;  // Valid when signal == 0.
  int signal = 0;     // Non-zero when killed by a signal.
  // The executor's own words on how the job ended (e.g. Slurm's state and
  // reason: "NODE_FAIL"), or "".
  std::string detail;
  bool ok() const { return signal == 0 && exit_code == 0; }
  // Exit code 2 (command-line usage) or 64-78 (sysexits.h: EX_USAGE to
  // EX_CONFIG): the program says its arguments or configuration are wrong,
  // so running it again cannot help.
  bool IsUsageError() const {
    return signal == 0 &&
           (exit_code == 2 || (exit_code >= 64 && exit_code <= 78));
  }
  std::string ToString() const;
};

// An Executor is thread-safe.
class Executor {
 public:
  virtual ~Executor() = default;

  // Starts a job. InvalidArgument for an empty argv; FailedPrecondition if
  // the program cannot be executed (the message names it).
  virtual absl::StatusOr<JobHandle> Start(const JobSpec& spec) = 0;

  // True when the executor runs a multi-replica trial attempt as one job
  // (StartGroup), placing the replicas itself: a cluster scheduler. Default:
  // false (ReplicaGroup starts one job per replica).
  virtual bool StartsGroups() const { return false; }
  // Starts the replicas `specs` (named `names`, the master first) as one job
  // whose exit is the group's outcome (the master's, see
  // jobs/replica_group.h). Only called when StartsGroups(). Errors as Start.
  virtual absl::StatusOr<JobHandle> StartGroup(
      const std::vector<std::string>& /*names*/,
      const std::vector<JobSpec>& /*specs*/) {
    return absl::UnimplementedError("this executor starts replicas one by one");
  }

  // The exit of a finished job (reaping it), or nullopt while it runs.
  virtual std::optional<JobExit> Poll(const JobHandle& job) = 0;

  // Asks the job to stop: SIGTERM to its whole process group now; SIGKILL
  // once `grace` has passed if it is still running (checked by Poll).
  virtual void Terminate(const JobHandle& job, absl::Duration grace) = 0;

  // Ends a job left over by an earlier cairnd (by pid and start time, so a
  // reused pid is never hit). Returns true if something was killed.
  virtual bool KillOrphan(int64_t pid, int64_t start_ticks) = 0;

  // True when jobs outlive cairnd (a cluster scheduler): a restarted cairnd
  // reattaches to them with Reattach instead of killing them
  // (KillOrphan is then never called). Default: false.
  virtual bool JobsOutliveServer() const { return false; }
  // The handle of a job an earlier cairnd started, from the pid and start
  // ticks it stored (JobHandle::pid, JobHandle::start_ticks). Only called
  // when JobsOutliveServer(). Default: a handle with id = pid.
  virtual JobHandle Reattach(int64_t pid, int64_t start_ticks) {
    return JobHandle{pid, pid, start_ticks};
  }
  // True while the cluster keeps the job in its queue, not running yet
  // (Slurm: PENDING, also after a requeue), as of the last Poll: the job
  // runner starts the max_running_time clock once it is false. Default:
  // false (a local job runs from its start).
  virtual bool Queued(const JobHandle& /*job*/) { return false; }
  // How often the cluster restarted the job on its own (Slurm requeues after
  // a node failure, preemption or `scontrol requeue`) since this executor
  // started or reattached it, as of the last Poll. Default: 0.
  virtual int Requeues(const JobHandle& /*job*/) { return 0; }
  // The jobs a cluster executor tracks, by the scheduler's own state as of
  // its last poll (Slurm: PENDING, RUNNING, COMPLETING, ...), for the
  // cairn_cluster_jobs gauge. Default: empty (local jobs are counted by the
  // job runner).
  virtual std::map<std::string, int64_t> JobsByState() { return {}; }
};

// Runs jobs as local child processes as `user` (jobs/job_user.h; default:
// the current user, no switch), each in its own session and process group
// (setsid), with PR_SET_NO_NEW_PRIVS, and PR_SET_PDEATHSIG so they die with
// cairnd. None of cairnd's descriptors reach a job. A job's environment is
// a clean base, not cairnd's: PATH=/usr/local/bin:/usr/bin:/bin,
// HOME (the user's home, else the job dir from CAIRN_JOB_DIR), USER,
// LOGNAME, LANG=C.UTF-8; then JobSpec::env. The log is opened with
// OpenJobFile (jobs/job_files.h): never through a link. Terminate's grace
// period is measured on `clock` (not owned; must outlive the executor).
std::unique_ptr<Executor> NewLocalProcessExecutor(
    util::Clock* clock, const JobUser& user = CurrentUser());

// Start time of `pid` in clock ticks since boot (from /proc), or 0 if the
// process does not exist.
int64_t ProcessStartTicks(int64_t pid);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_EXECUTOR_H_
