// Job runner: dispatch: top up a study with trials, start queued ones when
// GPUs and the running cap allow, end those of a stopped study. See
// job_runner.h.
#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jobs/hypertune_cursor.h"
#include "jobs/job_command.h"
#include "jobs/job_runner.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

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

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

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
