// The job runner: cairnd runs every trial of a study that has a job template
// as a training job, the way AI Platform Training runs a tuning job.
//
// One thread ticks every `poll_interval` (20 ms):
//  - tops up each ACTIVE job study with new trials (SuggestTrials) up to its
//    parallelism, each starting QUEUED;
//  - starts QUEUED trials as soon as their GPUs are free (GpuSlots), with
//    the parameters as --name=value, --job-dir=DIR and the CAIRN_*,
//    CLOUD_ML_*, TF_CONFIG and CUDA_VISIBLE_DEVICES variables, in cairnd's
//    working directory (relative command paths resolve there);
//  - collects metrics from each job's hypertune file into the store;
//  - ends jobs that time out, whose trial was stopped (early stopping or a
//    user) or whose study is no longer ACTIVE (SIGTERM, then SIGKILL);
//  - on exit: completes the trial with its last measurement, restarts a
//    failed job (same job dir, CAIRN_RESUME=1) up to max_restarts, or marks
//    the trial FAILED.
// At Start() it recovers: jobs a previous cairnd left running are killed
// (orphans, found by pid and start time) and resumed from their job dirs.
//
// A JobRunner is thread-safe.
#ifndef CAIRN_JOBS_JOB_RUNNER_H_
#define CAIRN_JOBS_JOB_RUNNER_H_

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jobs/executor.h"
#include "jobs/gpu_slots.h"
#include "trials/study_manager.h"

namespace cairn::jobs {

struct JobRunnerOptions {
  // Root under which every study's job dir must lie. Required.
  std::string jobs_root;
  // Address jobs use to reach cairnd (CAIRN_SERVER). Required.
  std::string server_address;
  // GPUs to schedule; -1 means detect with the CUDA runtime.
  int gpus = -1;
  // How long a job has between SIGTERM and SIGKILL. Default 10 s.
  absl::Duration grace_period = absl::Seconds(10);
  // Tick of the runner loop: bounds the dispatch latency (job exit to the
  // next job's start) and the delay of hypertune metrics. Default 20 ms.
  absl::Duration poll_interval = absl::Milliseconds(20);
  // Told about job restarts. Not owned; may be null.
  StudyObserver* observer = nullptr;
};

struct JobCounts {
  int queued = 0;
  int running = 0;
  int gpus_in_use = 0;
  int gpus_total = 0;
  int64_t restarts_total = 0;
};

class JobRunner {
 public:
  // Validates a study's job template: command non-empty, resources >= 0,
  // job_dir inside jobs_root. InvalidArgument naming the field and value.
  static absl::Status ValidateTemplate(const std::string& jobs_root,
                                       const cairn::v1::StudySpec& spec);

  // `manager` and `executor` are not owned and must outlive the runner.
  JobRunner(StudyManager* manager, Executor* executor,
            const JobRunnerOptions& options);
  ~JobRunner();  // Stops the loop; running jobs die with cairnd.

  // Recovers jobs left by an earlier cairnd and starts the loop.
  void Start();
  void Stop();

  // A chunk of a trial's job log starting at `offset`.
  struct LogChunk {
    std::string data;
    int64_t next_offset = 0;
    bool complete = false;
  };
  absl::StatusOr<LogChunk> ReadLogs(const std::string& trial_name,
                                    int64_t offset, int max_bytes);

  JobCounts Counts() const;

  // One pass of the loop (exposed for tests).
  void TEST_Tick() { Tick(); }

 private:
  struct Running {
    std::string trial_name;
    int64_t study_id = 0;
    JobHandle handle;
    std::vector<int> gpus;
    absl::Time started;
    absl::Duration timeout = absl::InfiniteDuration();
    std::string hypertune_path;
    double hypertune_timestamp = 0;
    // Last seen modification time and size of the hypertune file: the file
    // is read and parsed only when they change.
    std::filesystem::file_time_type hypertune_mtime;
    std::uintmax_t hypertune_size = 0;
    bool terminating = false;
    std::string terminate_reason;  // "timeout", "cancelled", "stopped"
    cairn::v1::TrialJob job;
  };

  void Loop();
  void Tick();
  void Recover();
  void TopUp(const JobStudyView& view);
  void StartQueued(const JobStudyView& view, const cairn::v1::Trial& trial);
  void CheckRunning(Running& r, const JobStudyView* view,
                    const cairn::v1::Trial* trial);
  // Returns true when the job finished and was handled.
  bool HandleExit(Running& r, const JobExit& exit);
  void Collect(Running& r);
  std::string StudyJobDir(const JobStudyView& view) const;
  void SetJob(const std::string& trial_name, const cairn::v1::TrialJob& job);

  StudyManager* const manager_;
  Executor* const executor_;
  const JobRunnerOptions options_;
  GpuSlots gpus_;

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Trials whose process runs, by trial name. Protected by mu_ (the loop
  // thread is the only writer).
  std::map<std::string, Running> running_ ABSL_GUARDED_BY(mu_);
  int queued_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t restarts_total_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_RUNNER_H_
