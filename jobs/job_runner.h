// The job runner: cairnd runs every trial of a study that has a job template
// as a training job, the way AI Platform Training runs a tuning job.
//
// One thread runs a pass (RunOnce) every `poll_interval` (20 ms). A pass:
//  - collects metrics from each running job's hypertune file into the store;
//    in a resumed attempt (a restart or a cairnd restart) entries whose
//    global_step is at or below the trial's last stored step are dropped,
//    so a trial that resumes from a checkpoint never records a step twice;
//  - ends jobs that time out, whose trial was stopped (early stopping or a
//    user) or whose study is no longer ACTIVE (SIGTERM, then SIGKILL after
//    the grace period); the trials of a stopped study end as stopped (see
//    EndStopped), never FAILED. A job whose trial ended while it runs
//    (completed through the API) runs on until it exits, unless its study
//    is deleted or a stop is asked for after the trial ended (its job
//    record then says STOPPING: StudyManager::StopTrial, SetStudyState);
//    such a job ends CANCELLED and the trial keeps its result. A job's
//    slot (and GPUs) is free once its last process is gone;
//  - on a job's exit: completes the trial with its last measurement,
//    restarts a failed job (same job dir, CAIRN_RESUME=1) up to
//    max_restarts after a backoff, or marks the trial FAILED; a job that
//    exits 2 or 64-78 (JobExit::IsUsageError) or times out is not
//    restarted;
//  - tops up each ACTIVE job study with new trials (SuggestTrials) up to its
//    parallelism, each starting QUEUED;
//  - starts QUEUED trials as soon as their GPUs are free (GpuSlots) and
//    fewer than max_running_jobs jobs run (server-wide), with the command
//    and environment of jobs/job_command.h, in a job dir owned by the job
//    user (jobs/job_template.h).
// A trial's job is a ReplicaGroup (jobs/replica_group.h): one process per
// replica of a multi-replica template (job_template.replicas), else one.
// The group's outcome is the master's exit, or the abnormal exit of
// another replica, which stops and restarts the whole group (one restart
// against max_restarts). Every replica's pid and start time is stored
// (TrialJob.replica_processes) so that Recover() kills them all.
// Before the first pass, Recover() takes over from an earlier cairnd: jobs it
// left running are killed (orphans, found by pid and start time, every
// replica of a group) and resumed from their job dirs, except the jobs of
// trials that had ended (running on, or STOPPING), which are killed and
// recorded CANCELLED (the trial keeps its result); with an executor whose
// jobs outlive cairnd (Executor::JobsOutliveServer, e.g. Slurm) they are
// reattached instead.
//
// Time (timeouts, restart backoff, log headers) comes from the injected
// util::Clock; processes from the injected Executor. So a test drives the
// runner with a fake clock and executor, calling Recover() and RunOnce()
// itself.
//
// Every job event is one spdlog info line "job <trial name>: ...": queued,
// started (attempt, pid, GPUs), pid exited (exit code or signal), restarting
// (restart n of m), resumed after a cairnd restart, killing (timeout,
// cancelled or stopped).
//
// A JobRunner is thread-safe. Failures of store writes are logged with the
// trial's name (spdlog) and the pass goes on.
#ifndef CAIRN_JOBS_JOB_RUNNER_H_
#define CAIRN_JOBS_JOB_RUNNER_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jobs/attempt_hooks.h"
#include "jobs/attempt_starter.h"
#include "jobs/executor.h"
#include "jobs/gpu_slots.h"
#include "jobs/hypertune_cursor.h"
#include "jobs/job_logs.h"
#include "jobs/job_template.h"
#include "jobs/job_user.h"
#include "jobs/replica_group.h"
#include "jobs/restart_backoff.h"
#include "jobs/stop_reason.h"
#include "trials/study_manager.h"
#include "util/clock.h"

namespace cairn::jobs {

struct JobRunnerOptions {
  // Root under which a study's job dir lies by default. Required.
  std::string jobs_root;
  // Further roots a template's absolute job_dir may lie in.
  std::vector<std::string> allowed_job_dirs;
  // Owner of the job dirs (chowned when job_user.switch_user). Default: the
  // current user, nothing chowned. The executor runs the jobs as it.
  JobUser job_user;
  // At most this many jobs run at once, all studies together; the others
  // stay QUEUED. 0: no cap. cairnd passes DefaultMaxRunningJobs.
  int max_running_jobs = 0;
  // Address jobs use to reach cairnd (CAIRN_SERVER). Required.
  std::string server_address;
  // CA file jobs verify cairnd's certificate with (CAIRN_TLS_CA); "" sets
  // none.
  std::string server_tls_ca;
  // Directory holding the `cairn` Python package that every job gets on
  // PYTHONPATH and as CAIRN_PYTHON_SDK (jobs/python_sdk.h); "" gives none.
  std::string python_sdk;
  // GPUs to schedule; -1 means DetectGpuCount (jobs/gpu_detect.h).
  int gpus = -1;
  // How long a job has between SIGTERM and SIGKILL. Default 10 s.
  absl::Duration grace_period = absl::Seconds(10);
  // Real time between the loop's passes: bounds the dispatch latency (job
  // exit to the next job's start) and the delay of hypertune metrics.
  // Default 20 ms.
  absl::Duration poll_interval = absl::Milliseconds(20);
  // Restart backoff: a failed job's first restart waits
  // restart_backoff_initial after its exit, each later restart of the same
  // trial restart_backoff_multiplier times longer than the one before, at
  // most restart_backoff_max. Defaults 1 s, 2, 60 s. Kept in memory: a
  // cairnd restart starts waiting trials at once.
  absl::Duration restart_backoff_initial = absl::Seconds(1);
  double restart_backoff_multiplier = 2.0;
  absl::Duration restart_backoff_max = absl::Seconds(60);
  // Told about job restarts. Not owned; may be null.
  StudyObserver* observer = nullptr;
  // When set, each attempt gets CAIRN_TOKEN = mint_token(trial name): a
  // token good only for that trial (cairnd's auth/token_registry.h). An
  // error fails the attempt's start.
  std::function<absl::StatusOr<std::string>(const std::string& trial_name)>
      mint_token;
  // When set, called with the trial's name once its job (every replica) has
  // exited: the attempt's token is then good for nothing (a restart mints a
  // new one).
  std::function<void(const std::string& trial_name)> forget_token;
  // When set, called around each attempt (jobs/attempt_hooks.h): before its
  // replicas start and after they all exited. Not owned; must outlive the
  // runner.
  AttemptHooks* hooks = nullptr;
};

// The cap cairnd uses without --max-running-jobs: the number of GPU slots
// when there are GPUs (`gpus` > 0), else the number of CPU cores.
int DefaultMaxRunningJobs(int gpus);

struct JobCounts {
  int queued = 0;
  int running = 0;
  int max_running = 0;  // The cap (0: none).
  int gpus_in_use = 0;
  int gpus_total = 0;
  int64_t restarts_total = 0;
};

class JobRunner {
 public:
  // `manager`, `executor` and `clock` are not owned and must outlive the
  // runner.
  JobRunner(StudyManager* manager, Executor* executor, util::Clock* clock,
            const JobRunnerOptions& options);
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;
  ~JobRunner();  // Stops the loop; running jobs die with cairnd.

  // Recover(), then starts the loop thread that calls RunOnce() every
  // poll_interval until Stop().
  void Start();
  // Stops and joins the loop thread. Idempotent.
  void Stop();

  // Takes over the job records an earlier cairnd left: kills each orphan
  // (Executor::KillOrphan with its pid and start ticks) and marks its job
  // QUEUED, so that the next pass resumes it. Call once, before the first
  // RunOnce(); Start() does.
  void Recover() ABSL_LOCKS_EXCLUDED(pass_mu_);

  // One pass of the loop (see the file comment). The loop thread calls it;
  // a test without Start() calls it to advance the runner one step. Passes
  // never overlap.
  void RunOnce() ABSL_LOCKS_EXCLUDED(pass_mu_);

  // See ReadJobLog (jobs/job_logs.h).
  absl::StatusOr<LogChunk> ReadLogs(const std::string& trial_name,
                                    int64_t offset, int max_bytes,
                                    const std::string& replica = "");

  // As of the end of the last pass (gpus_total from the start).
  JobCounts Counts() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A trial whose job the executor runs.
  struct Running {
    std::string trial_name;
    int64_t study_id = 0;
    std::optional<ReplicaGroup> group;  // Set once started.
    std::vector<int> gpus;
    // When the attempt started running (after any wait in a cluster's
    // queue): max_running_time counts from here.
    absl::Time started;
    absl::Duration timeout = absl::InfiniteDuration();
    // The attempt's hypertune file; in a resumed attempt entries at or
    // below the trial's highest stored step are dropped.
    HypertuneCursor hypertune;
    // Added to the steps of AttemptHooks::PollMetrics entries, which count
    // from 1 in each attempt: the trial's highest stored step when the
    // attempt started (0 in a first attempt), so a resumed attempt's log
    // metrics continue the curve instead of reusing stored steps.
    int64_t hook_step_base = 0;
    // Restarts the executor did on its own (Executor::Requeues) so far.
    int requeues_seen = 0;
    // Set once the runner ends the job (SIGTERM sent), with why.
    std::optional<StopReason> stop;
    cairn::v1::TrialJob job;
  };

  // Logs a failed store call with the trial's name; the pass goes on.
  static void LogIfError(const absl::Status& status,
                         const std::string& trial_name, const char* action);

  void Loop() ABSL_LOCKS_EXCLUDED(mu_, pass_mu_);
  void RecoverTrial(const cairn::v1::Trial& trial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  // With an executor whose jobs outlive cairnd (Slurm): takes a RUNNING or
  // STOPPING trial's job back by its stored id. False if not applicable.
  bool ReattachTrial(const JobStudyView& view, const cairn::v1::Trial& trial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);

  // Running jobs: collect, end, reap. True if a job exited.
  bool CheckRunningJobs(const std::vector<JobStudyView>& views)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  // `view` and `trial` are null when the trial is no longer pending.
  // Returns true when the job exited and its exit was handled.
  bool CheckRunning(Running& r, const JobStudyView* view,
                    const cairn::v1::Trial* trial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  // Why the job must end now, or nullopt while it may run on.
  std::optional<StopReason> StopReasonFor(const Running& r,
                                          const JobStudyView* view,
                                          const cairn::v1::Trial* trial);
  void Collect(Running& r);
  // Counts restarts the executor did on its own (a Slurm requeue) as job
  // restarts; the resumed job's replayed steps are dropped.
  void NoteRequeues(Running& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);

  // Tops up an ACTIVE study and starts (or cancels) its trials that do not
  // run. Returns how many stay queued.
  int Dispatch(JobStudyView& view) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  void TopUp(JobStudyView& view);
  int ParallelLimit(const cairn::v1::StudySpec& spec) const;
  void CancelUnstarted(const cairn::v1::Trial& trial,
                       cairn::v1::Study::State study_state);
  void StopUnstarted(const cairn::v1::Trial& trial);
  void StartQueued(const JobStudyView& view, const cairn::v1::Trial& trial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  void KeepQueued(const cairn::v1::Trial& trial);
  Running MakeRunning(const JobStudyView& view, const std::string& trial_name,
                      const cairn::v1::TrialJob& job, ReplicaGroup group,
                      const std::vector<int>& gpus) const;
  void FailToStart(const std::string& trial_name, cairn::v1::TrialJob job,
                   const std::string& reason);

  void HandleExit(Running& r, const GroupExit& exit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  // Sets `job`'s outcome and ends (or keeps) the trial accordingly.
  void RecordOutcome(const Running& r, const cairn::v1::Trial& trial,
                     const GroupExit& exit, cairn::v1::TrialJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  // Runs options_.hooks->AfterExit for the exited job, if set.
  void RunAfterExitHook(const Running& r, const cairn::v1::Trial& trial,
                        const GroupExit& exit);
  void CompleteAfterExit(const std::string& trial_name,
                         cairn::v1::TrialJob& job);
  void RestartOrFail(const Running& r, const std::string& how,
                     cairn::v1::TrialJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);

  // Store writes whose failure is logged with the trial's name.
  void SetJob(const std::string& trial_name, const cairn::v1::TrialJob& job);
  void MarkFailed(const std::string& trial_name, const std::string& reason);
  // Ends a stopped trial (its study stopped, or a user or early stopping
  // stopped it), never as FAILED (so it does not count toward the failure
  // limit): stopped early with its last measurement, or CANCELLED with
  // `reason` if it reported nothing.
  void EndStopped(const std::string& trial_name, const std::string& reason);

  void ForgetRestartTimes(const std::vector<JobStudyView>& views)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_);
  void Publish(int queued) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pass_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);

  StudyManager* const manager_;
  Executor* const executor_;
  util::Clock* const clock_;
  const JobRunnerOptions options_;
  const AttemptStarter starter_;
  GpuSlots gpus_;

  // Serializes passes (Recover, RunOnce). Held across store writes and
  // process starts: only another pass waits for it. Acquired before mu_.
  absl::Mutex pass_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Jobs the executor runs, by trial name.
  std::map<std::string, Running> running_ ABSL_GUARDED_BY(pass_mu_);
  // Trials waiting out their restart backoff.
  RestartBackoff backoff_ ABSL_GUARDED_BY(pass_mu_);
  int64_t restarts_total_ ABSL_GUARDED_BY(pass_mu_) = 0;

  // Never held across I/O, so Counts() answers at once.
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  JobCounts counts_ ABSL_GUARDED_BY(mu_);  // Published by each pass.

  std::thread thread_;
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_RUNNER_H_
