// ReplicaGroup: one attempt of a trial as a group of processes, one per
// replica (jobs/tf_config.h), master first, on an Executor. A one-process
// trial is a group of one master.
//
// Semantics (AI Platform's: "the status of the master replica signals the
// overall job status"):
//  - the group's outcome is the master's exit; when the master exits, every
//    other replica is stopped (Executor::Terminate with the grace period:
//    SIGTERM, SIGKILL after it);
//  - when another replica ends abnormally (a signal or a non-zero exit code)
//    before the master, that exit is the group's outcome and every other
//    replica is stopped the same way. A replica that exits 0 early is left
//    alone (its work is done);
//  - Terminate() stops every replica still running;
//  - Poll() reports the outcome only once every process has ended, so that
//    the GPUs, ports and job dir are free when the caller starts the next
//    attempt.
//
// Not thread-safe: the job runner's pass owns it.
#ifndef CAIRN_JOBS_REPLICA_GROUP_H_
#define CAIRN_JOBS_REPLICA_GROUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/executor.h"

namespace cairn::jobs {

// The outcome of a group.
struct GroupExit {
  JobExit exit;         // What decided the outcome.
  std::string replica;  // Whose exit it is, e.g. "worker-replica-1".
  int64_t pid = 0;      // Its pid.
  bool by_master = true;
  // "exit code 0" (the master's), or "worker-replica-1 killed by signal 9".
  std::string ToString() const;
};

// One process of a group.
struct RunningReplica {
  std::string name;  // e.g. "master-replica-0"
  JobHandle handle;
  std::optional<JobExit> exit;  // Once reaped.
};

class ReplicaGroup {
 public:
  // Starts specs[i] as replica names[i] (names.size() == specs.size() >= 1;
  // index 0 is the master). If one cannot start, those already started are
  // killed and reaped, and its error returned, prefixed by its name when
  // there are several replicas. On an executor that StartsGroups(), the
  // replicas are one job, tracked as the master's (its exit is the group's
  // outcome). `grace` is the time between SIGTERM and
  // SIGKILL when replicas are stopped. `executor` must outlive the group.
  static absl::StatusOr<ReplicaGroup> Start(
      Executor* executor, const std::vector<std::string>& names,
      const std::vector<JobSpec>& specs, absl::Duration grace);

  // A group of one master that is already running: a job a cluster executor
  // reattached to after a cairnd restart (Executor::Reattach).
  static ReplicaGroup Adopt(Executor* executor, const std::string& name,
                            const JobHandle& handle, absl::Duration grace);

  // Reaps what exited and applies the semantics above. The outcome once
  // every replica has ended, else nullopt.
  std::optional<GroupExit> Poll();

  // Stops every replica still running (SIGTERM now, SIGKILL after `grace`,
  // enforced by later Polls). The outcome is then the master's exit unless
  // another replica had already failed.
  void Terminate(absl::Duration grace);

  const std::vector<RunningReplica>& processes() const { return processes_; }
  const JobHandle& master() const { return processes_[0].handle; }

 private:
  ReplicaGroup(Executor* executor, absl::Duration grace)
      : executor_(executor), grace_(grace) {}

  // Terminates every replica not yet ended, once.
  void StopOthers();

  Executor* executor_;
  absl::Duration grace_;
  std::vector<RunningReplica> processes_;
  std::optional<GroupExit> outcome_;  // Decided; waiting for the rest.
  bool stopping_ = false;
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_REPLICA_GROUP_H_
