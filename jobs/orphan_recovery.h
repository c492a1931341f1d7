// Takes over a trial's job from an earlier cairnd that left it running, so
// that no process of it runs twice: the orphans are killed and the job is
// queued again, to resume from its job dir.
#ifndef CAIRN_JOBS_ORPHAN_RECOVERY_H_
#define CAIRN_JOBS_ORPHAN_RECOVERY_H_

#include <optional>

#include "cairn/v1/study.pb.h"
#include "jobs/executor.h"

namespace cairn::jobs {

// Kills every process the trial's stored job record names (the master and
// each other replica) with Executor::KillOrphan, by pid and start ticks so
// that a reused pid is never hit, and clears the replica processes. Returns
// the record to store: QUEUED with no pid and no GPUs (the message says
// when an orphan was killed); nullopt when the job never started or was
// QUEUED already (nothing to store). `executor` is not owned.
std::optional<cairn::v1::TrialJob> RequeueOrphanedJob(
    Executor* executor, const cairn::v1::Trial& trial);

// For an ended trial whose job an earlier cairnd left running (still
// running on after its trial ended, or STOPPING: a stop asked for then):
// kills its processes as RequeueOrphanedJob does and returns the record
// to store, CANCELLED with no pid and no GPUs (the trial keeps its
// result; nothing resumes). `executor` is not owned.
cairn::v1::TrialJob EndOrphanedJobOfEndedTrial(Executor* executor,
                                               const cairn::v1::Trial& trial);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_ORPHAN_RECOVERY_H_
