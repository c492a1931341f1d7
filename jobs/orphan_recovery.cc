// Killing and requeueing the jobs an earlier cairnd left running.
#include "jobs/orphan_recovery.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {

using cairn::v1::TrialJob;

std::optional<TrialJob> RequeueOrphanedJob(Executor* executor,
                                           const cairn::v1::Trial& trial) {
  TrialJob job = trial.job();
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
  if (killed) job.set_message("orphan of a previous cairnd killed; resuming");
  if (job.state() == TrialJob::STATE_UNSPECIFIED ||
      job.state() == TrialJob::QUEUED) {
    return std::nullopt;
  }
  spdlog::info("job {}: resumed after a cairnd restart ({}; queued again)",
               trial.name(),
               killed ? absl::StrCat("orphan pid ", job.pid(), " killed")
                      : "no orphan left");
  job.set_pid(0);
  job.set_proc_start_ticks(0);
  job.set_state(TrialJob::QUEUED);
  job.clear_gpus();
  return job;
}

}  // namespace cairn::jobs
