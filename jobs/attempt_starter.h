// Starts one attempt of a trial's job: its job dir, its replicas' commands,
// environments and GPUs, a line in each replica's log, and the processes.
// The job runner decides when a trial starts; this is how.
#ifndef CAIRN_JOBS_ATTEMPT_STARTER_H_
#define CAIRN_JOBS_ATTEMPT_STARTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cairn/v1/study.pb.h"
#include "jobs/attempt_hooks.h"
#include "jobs/executor.h"
#include "jobs/job_template.h"
#include "jobs/job_user.h"
#include "jobs/replica_group.h"
#include "util/clock.h"

namespace cairn::jobs {

// What an attempt takes from cairnd's configuration (see JobRunnerOptions
// for each field's meaning).
struct AttemptSettings {
  JobRoots roots;
  JobUser job_user;
  std::string server_address;
  std::string server_tls_ca;
  std::string python_sdk;
  absl::Duration grace_period = absl::Seconds(10);
  // When set, the attempt's CAIRN_TOKEN; an error fails the start.
  std::function<absl::StatusOr<std::string>(const std::string& trial_name)>
      mint_token;
  // When set, prepares each attempt (AttemptHooks::BeforeStart). Not owned.
  AttemptHooks* hooks = nullptr;
};

// Thread-compatible: Start() only reads the starter.
class AttemptStarter {
 public:
  // `executor` and `clock` are not owned and must outlive the starter.
  AttemptStarter(Executor* executor, util::Clock* clock,
                 AttemptSettings settings);

  // Starts the next attempt of `trial`'s job, of study `study` (id
  // `study_id`), on `gpus`: creates the job dir (CreateTrialJobDir), places
  // the replicas on the GPUs, mints the token, appends the attempt header
  // to each replica's log (a failure there is logged, not fatal) and starts
  // the replicas (ReplicaGroup::Start), a resume (CAIRN_RESUME=1) unless it
  // is the first attempt. Once the replicas are placed, `job` counts the
  // attempt and holds its job dir, log path and GPUs; settings.hooks, if
  // set, may change the specs before the start; on success it is
  // RUNNING with the master's pid and start ticks and, for several
  // replicas, every replica's process. The caller stores `job`, also on
  // error. Error: the status of the step that failed.
  absl::StatusOr<ReplicaGroup> Start(const cairn::v1::Study& study,
                                     int64_t study_id,
                                     const cairn::v1::Trial& trial,
                                     const std::vector<int>& gpus,
                                     cairn::v1::TrialJob& job) const;

 private:
  Executor* const executor_;
  util::Clock* const clock_;
  const AttemptSettings settings_;
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_ATTEMPT_STARTER_H_
