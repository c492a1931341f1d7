// Job runner: the running jobs of a pass: collect their metrics, end those
// that must stop, notice cluster requeues. See job_runner.h.
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jobs/hypertune_cursor.h"
#include "jobs/job_runner.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

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
    // own, unless a stop was asked for since: its job record says
    // STOPPING) or deleted with its study (NotFound: end the job).
    absl::StatusOr<Trial> now = manager_->GetTrialBasic(r.trial_name);
    if (!now.ok()) return StopReason::kCancelled;
    if (now->job().state() == TrialJob::STOPPING) return StopReason::kStopped;
    return std::nullopt;
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

}  // namespace cairn::jobs
