// Killing and requeueing the jobs an earlier cairnd left running.
#include "jobs/orphan_recovery.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {

using cairn::v1::TrialJob;

namespace {

// Kills every process `trial`'s job record names, by pid and start ticks;
// clears the replica processes of `job`. True if one was killed.
bool KillOrphans(Executor* executor, const cairn::v1::Trial& trial,
                 TrialJob& job) {
  bool killed =
      job.pid() > 0 && executor->KillOrphan(job.pid(), job.proc_start_ticks());
  // Every other replica of a group (the master's entry repeats pid).
  for (const cairn::v1::ReplicaProcess& p : job.replica_processes()) {
    if (p.pid() <= 0 || p.pid() == job.pid()) continue;
    if (executor->KillOrphan(p.pid(), p.proc_start_ticks())) {
      spdlog::info("job {}: orphan {} (pid {}) of a previous cairnd killed",
                   trial.name(), p.name(), p.pid());
      killed = true;
    }
  }
  job.clear_replica_processes();
  return killed;
}

void ClearProcess(TrialJob& job) {
  job.set_pid(0);
  job.set_proc_start_ticks(0);
  job.clear_gpus();
}

}  // namespace

std::optional<TrialJob> RequeueOrphanedJob(Executor* executor,
                                           const cairn::v1::Trial& trial) {
  TrialJob job = trial.job();
  const bool killed = KillOrphans(executor, trial, job);
  if (killed) job.set_message("orphan of a previous cairnd killed; resuming");
  if (job.state() == TrialJob::STATE_UNSPECIFIED ||
      job.state() == TrialJob::QUEUED) {
    return std::nullopt;
  }
  spdlog::info("job {}: resumed after a cairnd restart ({}; queued again)",
               trial.name(),
               killed ? absl::StrCat("orphan pid ", job.pid(), " killed")
                      : "no orphan left");
  ClearProcess(job);
  job.set_state(TrialJob::QUEUED);
  return job;
}

TrialJob EndOrphanedJobOfEndedTrial(Executor* executor,
                                    const cairn::v1::Trial& trial) {
  TrialJob job = trial.job();
  const bool stopping = job.state() == TrialJob::STOPPING;
  const bool killed = KillOrphans(executor, trial, job);
  const std::string what =
      killed ? absl::StrCat("orphan pid ", job.pid(), " killed")
             : std::string("no orphan left");
  spdlog::info(
      "job {}: ended after a cairnd restart ({}; its trial had "
      "ended)",
      trial.name(), what);
  job.set_message(absl::StrCat(stopping ? "stopped after the trial ended"
                                        : "ran on after the trial "
                                          "ended",
                               "; cairnd restarted and ended the job (", what,
                               ")"));
  ClearProcess(job);
  job.set_state(TrialJob::CANCELLED);
  return job;
}

}  // namespace cairn::jobs
