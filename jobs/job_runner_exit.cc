// Job runner: a job's exit: record its outcome, complete, fail or restart
// the trial (with backoff). See job_runner.h.
#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "api/trial_states.h"
#include "jobs/job_runner.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

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
  if (!api::IsPendingState(trial.state()) && r.stop.has_value()) {
    job.set_state(TrialJob::CANCELLED);
    job.set_message(absl::StrCat(StopReasonText(*r.stop),
                                 " after the trial ended; job ", how));
  } else if (!api::IsPendingState(trial.state())) {
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

}  // namespace cairn::jobs
