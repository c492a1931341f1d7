// SlurmExecutor: each job is one Slurm batch job, run with the Slurm client
// tools (sbatch, squeue, scancel) with explicit argv, never a shell.
#ifndef CAIRN_JOBS_SLURM_EXECUTOR_H_
#define CAIRN_JOBS_SLURM_EXECUTOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "jobs/executor.h"
#include "jobs/job_user.h"
#include "jobs/slurm_commands.h"
#include "util/clock.h"

namespace cairn::jobs {

// Start: sbatch (SbatchArgv) of a small script, written into a private
// dir in /tmp and removed once sbatch has copied it, that execs the job's
// argv; the
// handle's id and pid are the Slurm job id (start_ticks 0), which the runner
// stores with the trial. A multi-replica trial attempt (StartGroup) is one
// job of one task per replica (SbatchGroupArgv) whose batch script runs
// options.launcher (cairnd) in the modes of jobs/slurm_launch.h, told by a
// group file in the job dir; the job's exit is the master's. Refuses
// (InvalidArgument) a job env with SBATCH_*/SLURM_* variables;
// sbatch's refusal (unknown partition, impossible GPU request, ...) is
// FailedPrecondition with Slurm's message. A container job whose image is
// not in the job user's store (options.containers.pull "never";
// CheckJobUserImage, jobs/image_store.h) is refused before sbatch,
// FailedPrecondition naming the image.
// Poll: answers from one `squeue -t all -j ID,...` for all of the
// executor's jobs, run at most once per options.status_interval; a job
// squeue no longer knows is over (exit code 1, "no longer known to Slurm").
// While Slurm cannot be reached, jobs count as running.
// Terminate: `scancel --signal=TERM --full`, then `scancel` once `grace`
// has passed. JobsOutliveServer() is true: a restarted cairnd reattaches.
// `user` is the job user: sbatch --uid/--gid when user.switch_user.
// FailedPrecondition if sbatch, squeue or scancel is missing or squeue
// cannot reach the cluster (the message quotes Slurm).
absl::StatusOr<std::unique_ptr<Executor>> NewSlurmExecutor(
    const SlurmOptions& options, util::Clock* clock,
    const JobUser& user = CurrentUser());

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_SLURM_EXECUTOR_H_
