// Job runner: construction, the loop thread, store writes, recovery and
// the pass itself. A pass's steps live beside it: running jobs
// (job_runner_running.cc), exits (job_runner_exit.cc) and dispatch
// (job_runner_dispatch.cc). See job_runner.h for what a pass does.
#include "jobs/job_runner.h"

#include <algorithm>
#include <set>
#include <utility>

#include "jobs/gpu_detect.h"
#include "jobs/orphan_recovery.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {

using cairn::v1::Trial;
using cairn::v1::TrialJob;

void JobRunner::LogIfError(const absl::Status& status,
                           const std::string& trial_name, const char* action) {
  if (status.ok()) return;
  spdlog::warn("job runner: {} for trial {} failed: {}", action, trial_name,
               status.ToString());
}

JobRunner::JobRunner(StudyManager* manager, Executor* executor,
                     util::Clock* clock, const JobRunnerOptions& options)
    : manager_(manager),
      executor_(executor),
      clock_(clock),
      options_(options),
      starter_(executor, clock,
               AttemptSettings{{options.jobs_root, options.allowed_job_dirs},
                               options.job_user,
                               options.server_address,
                               options.server_tls_ca,
                               options.python_sdk,
                               options.grace_period,
                               options.mint_token,
                               options.hooks}),
      gpus_(options.gpus >= 0 ? options.gpus : DetectGpuCount()),
      backoff_(options.restart_backoff_initial,
               options.restart_backoff_multiplier,
               options.restart_backoff_max) {
  counts_.gpus_total = gpus_.total();
  counts_.max_running = options.max_running_jobs;
}

int DefaultMaxRunningJobs(int gpus) {
  if (gpus > 0) return gpus;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

JobRunner::~JobRunner() { Stop(); }

void JobRunner::Start() {
  Recover();
  thread_ = std::thread([this] { Loop(); });
}

void JobRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void JobRunner::Loop() {
  while (true) {
    RunOnce();
    absl::MutexLock lock(&mu_);
    auto stopped = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopped), options_.poll_interval);
    if (stop_) return;
  }
}

absl::StatusOr<LogChunk> JobRunner::ReadLogs(const std::string& trial_name,
                                             int64_t offset, int max_bytes,
                                             const std::string& replica) {
  return ReadJobLog(manager_, trial_name, offset, max_bytes, replica);
}

JobCounts JobRunner::Counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

// --- Store writes. ---

void JobRunner::SetJob(const std::string& trial_name, const TrialJob& job) {
  // A failure (e.g. the study was deleted) loses only bookkeeping.
  LogIfError(manager_->UpdateTrialJob(trial_name, job), trial_name,
             "recording the job state");
}

void JobRunner::MarkFailed(const std::string& trial_name,
                           const std::string& reason) {
  LogIfError(manager_->FailTrial(trial_name, reason).status(), trial_name,
             "marking the trial FAILED");
}

void JobRunner::EndStopped(const std::string& trial_name,
                           const std::string& reason) {
  // STOPPING first, so that completing it marks it stopped early.
  LogIfError(manager_->StopTrial(trial_name).status(), trial_name,
             "marking the stopped trial STOPPING");
  // Its last measurement becomes final; a trial with none cannot complete.
  if (manager_->CompleteTrial(trial_name, std::nullopt, false, "").ok()) {
    return;
  }
  LogIfError(manager_->CancelTrial(trial_name, reason).status(), trial_name,
             "ending the stopped trial CANCELLED");
}

// --- Recovery. ---

void JobRunner::Recover() {
  absl::MutexLock pass(&pass_mu_);
  for (const JobStudyView& view : manager_->JobStudies()) {
    for (const Trial& t : view.pending) {
      if (!ReattachTrial(view, t)) RecoverTrial(t);
    }
    for (const Trial& t : view.ended_with_live_job) {
      if (!ReattachTrial(view, t)) {
        SetJob(t.name(), EndOrphanedJobOfEndedTrial(executor_, t));
      }
    }
  }
}

bool JobRunner::ReattachTrial(const JobStudyView& view, const Trial& trial) {
  const TrialJob& job = trial.job();
  if (!executor_->JobsOutliveServer() || job.pid() <= 0 ||
      (job.state() != TrialJob::RUNNING && job.state() != TrialJob::STOPPING)) {
    return false;
  }
  const JobHandle handle =
      executor_->Reattach(job.pid(), job.proc_start_ticks());
  std::vector<int> gpus(job.gpus().begin(), job.gpus().end());
  gpus_.Claim(gpus);
  spdlog::info("job {}: reattached after a cairnd restart (job id {})",
               trial.name(), handle.id);
  running_.emplace(trial.name(), MakeRunning(view, trial.name(), job,
                                             ReplicaGroup::Adopt(
                                                 executor_, "master-replica-0",
                                                 handle, options_.grace_period),
                                             gpus));
  return true;
}

void JobRunner::RecoverTrial(const Trial& trial) {
  std::optional<TrialJob> job = RequeueOrphanedJob(executor_, trial);
  if (job.has_value()) SetJob(trial.name(), *job);
}

// --- A pass. ---

void JobRunner::RunOnce() {
  absl::MutexLock pass(&pass_mu_);
  // Running jobs first: their exits free slots that Dispatch fills in the
  // same pass (dispatch latency is one pass at most).
  std::vector<JobStudyView> views = manager_->JobStudies();
  if (CheckRunningJobs(views)) views = manager_->JobStudies();
  int queued = 0;
  for (JobStudyView& view : views) queued += Dispatch(view);
  ForgetRestartTimes(views);
  Publish(queued);
}

void JobRunner::Publish(int queued) {
  absl::MutexLock lock(&mu_);
  counts_.queued = queued;
  counts_.running = static_cast<int>(running_.size());
  counts_.gpus_in_use = gpus_.in_use();
  counts_.gpus_total = gpus_.total();
  counts_.restarts_total = restarts_total_;
}

void JobRunner::ForgetRestartTimes(const std::vector<JobStudyView>& views) {
  if (backoff_.empty()) return;
  std::set<std::string> pending;
  for (const JobStudyView& view : views) {
    for (const Trial& t : view.pending) pending.insert(t.name());
  }
  backoff_.ForgetUnless(
      [&pending](const std::string& name) { return pending.count(name) > 0; });
}

}  // namespace cairn::jobs
