// Job runner implementation. See job_runner.h for what a pass does.
#include "jobs/job_runner.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/resource_names.h"
#include "api/trial_states.h"
#include "jobs/gpu_detect.h"
#include "jobs/hypertune_cursor.h"
#include "jobs/job_command.h"
#include "jobs/orphan_recovery.h"
#include "jobs/tf_config.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

// Logs a failed store call of the job runner; the pass goes on.
void LogIfError(const absl::Status& status, const std::string& trial_name,
                const char* action) {
  if (status.ok()) return;
  spdlog::warn("job runner: {} for trial {} failed: {}", action, trial_name,
               status.ToString());
}

// A template's max_running_time, or infinite when unset or zero.
absl::Duration MaxRunningTime(const cairn::v1::TrialJobTemplate& tmpl) {
  const google::protobuf::Duration& d = tmpl.max_running_time();
  if (!tmpl.has_max_running_time() ||
      d.seconds() + (d.nanos() > 0 ? 1 : 0) <= 0) {
    return absl::InfiniteDuration();
  }
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

}  // namespace

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

// --- Running jobs. ---

bool JobRunner::CheckRunningJobs(const std::vector<JobStudyView>& views) {
  std::map<std::string, std::pair<const JobStudyView*, const Trial*>> pending;
  for (const JobStudyView& view : views) {
    for (const Trial& trial : view.pending) {
      pending[trial.name()] = {&view, &trial};
    }
  }
  bool exited = false;
  for (auto it = running_.begin(); it != running_.end();) {
    auto p = pending.find(it->first);
    const bool done =
        p == pending.end()
            ? CheckRunning(it->second, nullptr, nullptr)
            : CheckRunning(it->second, p->second.first, p->second.second);
    exited = exited || done;
    it = done ? running_.erase(it) : std::next(it);
  }
  return exited;
}

bool JobRunner::CheckRunning(Running& r, const JobStudyView* view,
                             const Trial* trial) {
  Collect(r);
  if (std::optional<GroupExit> exit = r.group->Poll()) {
    HandleExit(r, *exit);
    return true;
  }
  NoteRequeues(r);
  // max_running_time counts running time, not time in a cluster's queue.
  if (executor_->Queued(r.group->master())) r.started = clock_->Now();
  if (r.stop.has_value()) return false;
  const std::optional<StopReason> stop = StopReasonFor(r, view, trial);
  if (!stop.has_value()) return false;
  const std::string reason(StopReasonText(*stop));
  spdlog::info("job {}: killing pid {}{} ({}): SIGTERM, SIGKILL after {}",
               r.trial_name, r.group->master().pid,
               r.group->processes().size() > 1
                   ? absl::StrCat(" and its ", r.group->processes().size() - 1,
                                  " other replica(s)")
                   : "",
               reason, absl::FormatDuration(options_.grace_period));
  r.group->Terminate(options_.grace_period);
  r.stop = stop;
  r.job.set_state(TrialJob::STOPPING);
  r.job.set_message(reason);
  SetJob(r.trial_name, r.job);
  return false;
}

std::optional<StopReason> JobRunner::StopReasonFor(const Running& r,
                                                   const JobStudyView* view,
                                                   const Trial* trial) {
  if (clock_->Now() - r.started > r.timeout) return StopReason::kTimeout;
  if (view == nullptr) {
    // No longer pending: completed through the API (the job ends on its
    // own) or deleted with its study (NotFound: end the job).
    if (manager_->GetTrialBasic(r.trial_name).ok()) return std::nullopt;
    return StopReason::kCancelled;
  }
  if (view->study.state() != Study::ACTIVE) return StopReason::kCancelled;
  if (trial != nullptr && trial->state() == Trial::STOPPING) {
    return StopReason::kStopped;
  }
  return std::nullopt;
}

void JobRunner::NoteRequeues(Running& r) {
  if (!r.group.has_value()) return;
  const int requeues = executor_->Requeues(r.group->master());
  if (requeues <= r.requeues_seen) return;
  const int added = requeues - r.requeues_seen;
  r.requeues_seen = requeues;
  r.job.set_restarts(r.job.restarts() + added);
  restarts_total_ += added;
  absl::StatusOr<int64_t> last = manager_->LastReportedStep(r.trial_name);
  if (last.ok()) r.hypertune.RaiseStepFloor(*last);
  spdlog::info("job {}: restarted by the cluster (restart {})", r.trial_name,
               r.job.restarts());
  SetJob(r.trial_name, r.job);
}

void JobRunner::Collect(Running& r) {
  std::optional<std::vector<HypertuneEntry>> entries =
      r.hypertune.Poll(r.trial_name);
  if (options_.hooks != nullptr) {
    std::vector<HypertuneEntry> more =
        options_.hooks->PollMetrics(r.trial_name);
    if (!more.empty() && !entries.has_value()) entries.emplace();
    for (HypertuneEntry& e : more) {
      e.global_step += r.hook_step_base;
      entries->push_back(std::move(e));
    }
  }
  if (!entries.has_value()) return;
  r.job.set_hypertune_timestamp(r.hypertune.timestamp());
  if (entries->empty()) return SetJob(r.trial_name, r.job);
  // The measurements and how far the file was read, in one durable write.
  absl::StatusOr<int64_t> added = manager_->AddMeasurementsWithJob(
      ToReports(r.trial_name, *entries), r.trial_name, r.job);
  if (!added.ok()) {
    // Rejected measurements (e.g. a NaN) are dropped; move past them.
    LogIfError(added.status(), r.trial_name,
               "recording hypertune metrics (skipped)");
    SetJob(r.trial_name, r.job);
  }
}

// --- Exits. ---

void JobRunner::HandleExit(Running& r, const GroupExit& exit) {
  spdlog::info("job {}: pid {} exited: {}", r.trial_name, exit.pid,
               exit.ToString());
  Collect(r);
  if (options_.forget_token) options_.forget_token(r.trial_name);
  gpus_.Release(r.gpus);
  TrialJob job = r.job;
  job.set_pid(0);
  job.set_proc_start_ticks(0);
  job.clear_replica_processes();
  job.set_last_exit_code(exit.exit.signal != 0 ? 128 + exit.exit.signal
                                               : exit.exit.exit_code);
  absl::StatusOr<Trial> trial = manager_->GetTrialBasic(r.trial_name);
  if (!trial.ok()) {
    // NotFound: deleted meanwhile, nothing left to record.
    if (!absl::IsNotFound(trial.status())) {
      LogIfError(trial.status(), r.trial_name, "reading the exited trial");
    }
    return;
  }
  RunAfterExitHook(r, *trial, exit);
  RecordOutcome(r, *trial, exit, job);
  SetJob(r.trial_name, job);
}

void JobRunner::RunAfterExitHook(const Running& r, const Trial& trial,
                                 const GroupExit& exit) {
  if (options_.hooks == nullptr) return;
  absl::StatusOr<Study> study = manager_->GetStudy(api::StudyName(r.study_id));
  if (!study.ok()) {
    LogIfError(study.status(), r.trial_name, "reading the study (no hook)");
    return;
  }
  const bool succeeded = exit.exit.ok() && !r.stop.has_value();
  LogIfError(
      options_.hooks->AfterExit(*study, trial, r.job.job_dir(), succeeded),
      r.trial_name, "collecting the job's outputs");
}

void JobRunner::RecordOutcome(const Running& r, const Trial& trial,
                              const GroupExit& group_exit, TrialJob& job) {
  const JobExit& exit = group_exit.exit;
  const std::string how = group_exit.ToString();
  if (!api::IsPendingState(trial.state())) {
    job.set_state(TrialJob::SUCCEEDED);
    job.set_message(absl::StrCat("trial completed by the program; job ", how));
  } else if (r.stop == StopReason::kCancelled) {
    job.set_state(TrialJob::CANCELLED);
    job.set_message(absl::StrCat("cancelled: the study stopped; job ", how));
    EndStopped(r.trial_name, "stopped: the study stopped before it reported");
  } else if (r.stop == StopReason::kStopped ||
             trial.state() == Trial::STOPPING) {
    job.set_state(TrialJob::CANCELLED);
    job.set_message(absl::StrCat("stopped early; job ", how));
    EndStopped(r.trial_name, "stopped before reporting its objective");
  } else if (r.stop == StopReason::kTimeout) {
    job.set_state(TrialJob::FAILED);
    job.set_message(kTimeoutMessage);
    MarkFailed(r.trial_name, job.message());
  } else if (exit.ok()) {
    CompleteAfterExit(r.trial_name, job);
  } else if (exit.IsUsageError()) {
    job.set_state(TrialJob::FAILED);
    job.set_message(absl::StrCat(how,
                                 ": a usage or configuration error, "
                                 "not restarted"));
    MarkFailed(r.trial_name, absl::StrCat("job failed: ", job.message()));
  } else {
    RestartOrFail(r, how, job);
  }
}

void JobRunner::CompleteAfterExit(const std::string& trial_name,
                                  TrialJob& job) {
  absl::StatusOr<Trial> done =
      manager_->CompleteTrial(trial_name, std::nullopt, false, "");
  if (done.ok()) {
    job.set_state(TrialJob::SUCCEEDED);
    job.set_message("exit code 0");
    return;
  }
  job.set_state(TrialJob::FAILED);
  job.set_message(absl::StrCat("exit code 0 but ", done.status().message()));
  MarkFailed(trial_name, job.message());
}

void JobRunner::RestartOrFail(const Running& r, const std::string& how,
                              TrialJob& job) {
  // Look the template up again: the view is not at hand here.
  absl::StatusOr<Study> study = manager_->GetStudy(api::StudyName(r.study_id));
  LogIfError(study.status(), r.trial_name, "reading max_restarts (taken as 0)");
  const int max_restarts =
      study.ok() ? study->spec().job_template().max_restarts() : 0;
  if (job.restarts() >= max_restarts) {
    job.set_state(TrialJob::FAILED);
    job.set_message(
        absl::StrCat(how, " after ", job.restarts(), " restart(s)"));
    MarkFailed(r.trial_name, absl::StrCat("job failed: ", job.message()));
    return;
  }
  job.set_restarts(job.restarts() + 1);
  job.set_state(TrialJob::QUEUED);
  job.set_message(
      absl::StrCat(how, "; restart ", job.restarts(), " of ", max_restarts));
  const absl::Duration delay =
      backoff_.Schedule(r.trial_name, job.restarts(), clock_->Now());
  spdlog::info("job {}: restarting in {} (restart {} of {}, attempt {})",
               r.trial_name, absl::FormatDuration(delay), job.restarts(),
               max_restarts, job.attempts() + 1);
  ++restarts_total_;
  if (options_.observer != nullptr && study.ok()) {
    options_.observer->OnJobRestart({study->name(), study->display_name()});
  }
}

// --- Dispatch. ---

int JobRunner::Dispatch(JobStudyView& view) {
  if (view.study.state() == Study::ACTIVE) TopUp(view);
  int queued = 0;
  for (const Trial& trial : view.pending) {
    if (running_.count(trial.name()) > 0) continue;
    if (view.study.state() != Study::ACTIVE) {
      CancelUnstarted(trial, view.study.state());
    } else if (trial.state() == Trial::STOPPING) {
      StopUnstarted(trial);
    } else {
      StartQueued(view, trial);
      if (running_.count(trial.name()) == 0) ++queued;
    }
  }
  return queued;
}

int JobRunner::ParallelLimit(const cairn::v1::StudySpec& spec) const {
  if (spec.max_parallel_trials() > 0) return spec.max_parallel_trials();
  const int per_trial = TrialGpuCount(spec.job_template());
  if (per_trial > 0) return std::max(1, gpus_.total() / per_trial);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void JobRunner::TopUp(JobStudyView& view) {
  const int want =
      ParallelLimit(view.study.spec()) - static_cast<int>(view.pending.size());
  if (want <= 0) return;
  absl::StatusOr<SuggestResult> result =
      manager_->SuggestTrials(view.study.name(), want, "");
  if (!result.ok()) {
    spdlog::warn("job runner: suggesting trials for {} failed: {}",
                 view.study.name(), result.status().ToString());
    return;
  }
  // New trials have no job state yet; StartQueued records RUNNING, or
  // QUEUED when their GPUs are busy (one write instead of two).
  for (Trial& t : result->trials) {
    spdlog::info("job {}: queued (needs {} GPU(s))", t.name(),
                 TrialGpuCount(view.study.spec().job_template()));
    view.pending.push_back(std::move(t));
  }
  view.study.set_state(result->study_state);
}

void JobRunner::CancelUnstarted(const Trial& trial, Study::State study_state) {
  TrialJob job = trial.job();
  job.set_state(TrialJob::CANCELLED);
  job.set_message(
      absl::StrCat("cancelled: study is ", Study::State_Name(study_state)));
  EndStopped(trial.name(), "stopped: the study stopped before it started");
  SetJob(trial.name(), job);
}

void JobRunner::StopUnstarted(const Trial& trial) {
  TrialJob job = trial.job();
  job.set_state(TrialJob::CANCELLED);
  job.set_message("stopped before it started");
  EndStopped(trial.name(), "stopped before reporting");
  SetJob(trial.name(), job);
}

// --- Starting jobs. ---

void JobRunner::StartQueued(const JobStudyView& view, const Trial& trial) {
  std::optional<std::vector<int>> gpus;
  const bool capped =
      options_.max_running_jobs > 0 &&
      static_cast<int>(running_.size()) >= options_.max_running_jobs;
  if (!capped && !backoff_.Waiting(trial.name(), clock_->Now())) {
    gpus = gpus_.Acquire(TrialGpuCount(view.study.spec().job_template()));
  }
  if (!gpus.has_value()) return KeepQueued(trial);
  TrialJob job = trial.job();
  absl::StatusOr<ReplicaGroup> group =
      starter_.Start(view.study, view.study_id, trial, *gpus, job);
  if (!group.ok()) {
    gpus_.Release(*gpus);
    return FailToStart(trial.name(), job,
                       std::string(group.status().message()));
  }
  SetJob(trial.name(), job);
  backoff_.Forget(trial.name());
  running_.emplace(trial.name(), MakeRunning(view, trial.name(), job,
                                             *std::move(group), *gpus));
}

void JobRunner::KeepQueued(const Trial& trial) {
  if (trial.job().state() == TrialJob::QUEUED) return;
  TrialJob job = trial.job();
  job.set_state(TrialJob::QUEUED);
  SetJob(trial.name(), job);
}

JobRunner::Running JobRunner::MakeRunning(const JobStudyView& view,
                                          const std::string& trial_name,
                                          const TrialJob& job,
                                          ReplicaGroup group,
                                          const std::vector<int>& gpus) const {
  Running r;
  r.trial_name = trial_name;
  r.study_id = view.study_id;
  r.group = std::move(group);
  r.gpus = gpus;
  r.started = clock_->Now();
  r.timeout = MaxRunningTime(view.study.spec().job_template());
  r.job = job;
  int64_t step_floor = -1;
  if (job.attempts() > 1) {
    absl::StatusOr<int64_t> last = manager_->LastReportedStep(trial_name);
    LogIfError(last.status(), trial_name, "reading the last reported step");
    step_floor = last.ok() ? *last : -1;
  }
  r.hypertune = HypertuneCursor(HypertunePath(job.job_dir()).string(),
                                job.hypertune_timestamp(), step_floor);
  r.hook_step_base = std::max<int64_t>(step_floor, 0);
  return r;
}

void JobRunner::FailToStart(const std::string& trial_name, TrialJob job,
                            const std::string& reason) {
  job.set_state(TrialJob::FAILED);
  job.set_message(reason);
  MarkFailed(trial_name, reason);
  SetJob(trial_name, job);
}

}  // namespace cairn::jobs
