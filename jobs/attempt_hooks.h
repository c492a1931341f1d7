// Hooks a server component adds around each attempt of a trial's job, so
// that a job contract the job runner does not know (SageMaker's /opt/ml
// tree, sagemaker/training_run.h) can prepare an attempt's files before its
// replicas start and collect its outputs after they exit.
#ifndef CAIRN_JOBS_ATTEMPT_HOOKS_H_
#define CAIRN_JOBS_ATTEMPT_HOOKS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cairn/v1/study.pb.h"
#include "jobs/executor.h"
#include "jobs/hypertune.h"

namespace cairn::jobs {

// Implementations must be thread-safe; the job runner calls them from its
// pass, never two at once for one trial.
class AttemptHooks {
 public:
  virtual ~AttemptHooks() = default;

  // Called once the replicas' specs are made (`specs[i]` is replica i, the
  // master first), before any starts, with the attempt's job dir (created,
  // owned by the job user). May change the specs (argv, env, mounts,
  // limits). An error fails the attempt's start with its message.
  virtual absl::Status BeforeStart(const cairn::v1::Study& study,
                                   const cairn::v1::Trial& trial,
                                   const std::string& job_dir,
                                   std::vector<JobSpec>& specs) = 0;

  // Called once every replica of the attempt has exited (`succeeded`: the
  // group exited 0 and was not stopped), before the outcome is recorded.
  // Errors are logged by the caller; the outcome stands.
  virtual absl::Status AfterExit(const cairn::v1::Study& study,
                                 const cairn::v1::Trial& trial,
                                 const std::string& job_dir,
                                 bool succeeded) = 0;

  // Called on each pass while trial `trial_name`'s attempt runs, and once
  // more after it exited (before AfterExit): metrics the hook read since
  // the last call, stored like the job's hypertune entries. Their
  // global_step counts from 1 in each attempt (e.g. matching log lines);
  // the runner adds the trial's highest step stored before the attempt
  // started, so a resumed attempt's steps continue. Default: none.
  virtual std::vector<HypertuneEntry> PollMetrics(
      const std::string& /*trial_name*/) {
    return {};
  }
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_ATTEMPT_HOOKS_H_
