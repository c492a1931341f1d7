// Runs a SageMaker training job's container under SageMaker's contract:
// the job runner's AttemptHooks for studies made from a CreateTrainingJob
// request (StudySpec.sagemaker_training_job); other studies pass through.
// Each trial runs TrialTrainingRequest (tuning_job_view.h): a tuning job's
// trial under its own job name with its own hyperparameters.
//
// Before an attempt starts, for host i of the job (the replica index):
//  - JOB_DIR/ml/algo-N/ holds the /opt/ml tree (container_files.h), owned
//    by the job user, mounted read-write at /opt/ml;
//  - each channel is mounted read-only at /opt/ml/input/data/<channel>
//    straight from the object root (channel_mounts.h: S3Prefix, the
//    prefix's directory; ManifestFile, each listed object at its relative
//    key) or from FileSystemDataSource.DirectoryPath, which must also lie
//    inside the object root; nothing is copied;
//  - CheckpointConfig.S3Uri's directory (created, owned by the job user) is
//    mounted read-write at its LocalPath, so a restart finds what the
//    attempt before it saved;
//  - argv is ContainerArguments or "train" (no parameters, no --job-dir),
//    the environment gains Environment, TRAINING_JOB_NAME and
//    TRAINING_JOB_ARN, and the memory limit is the instance type's, at most
//    this machine's.
// While it runs, MetricDefinitions are applied to the master's log
// (log_metrics.h) and PollMetrics returns the measurements; every host's
// log gets its times noted (log_times.h), so CloudWatch Logs' API can
// serve it (cloudwatch_logs.h). The moments of each attempt (its start,
// its exit, its outputs packed) go to the job dir's timeline
// (job_timeline.h).
// After every replica exited: host algo-1's /opt/ml/model is packed to
// <S3OutputPath>/<TrainingJobName>/output/model.tar.gz and its
// /opt/ml/output/data to output.tar.gz beside it (on failure too, as
// SageMaker keeps what a failed job wrote). Paths are resolved again at
// each start (links may have changed since the job was created); a refusal
// fails the attempt with the field and value.
#ifndef CAIRN_SAGEMAKER_TRAINING_RUN_H_
#define CAIRN_SAGEMAKER_TRAINING_RUN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "cairn/v1/study.pb.h"
#include "jobs/attempt_hooks.h"
#include "jobs/job_user.h"
#include "sagemaker/log_metrics.h"
#include "sagemaker/log_times.h"
#include "sagemaker/object_root.h"

namespace cairn::sagemaker {

// The /opt/ml tree of host `index` under an attempt's job dir.
std::string HostDir(const std::string& job_dir, int index);

// The object-root path of a training job's output archive `file`
// ("model.tar.gz"): <S3OutputPath>/<TrainingJobName>/output/<file>.
std::string OutputUri(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request,
    const std::string& file);

// Thread-safe.
class TrainingRunHooks final : public jobs::AttemptHooks {
 public:
  // `job_user` owns the prepared files; `host_memory_bytes` caps an
  // instance type's memory (0: no cap).
  TrainingRunHooks(ObjectRoot objects, jobs::JobUser job_user,
                   int64_t host_memory_bytes)
      : objects_(std::move(objects)),
        job_user_(std::move(job_user)),
        host_memory_bytes_(host_memory_bytes) {}

  absl::Status BeforeStart(const cairn::v1::Study& study,
                           const cairn::v1::Trial& trial,
                           const std::string& job_dir,
                           std::vector<jobs::JobSpec>& specs) override;
  absl::Status AfterExit(const cairn::v1::Study& study,
                         const cairn::v1::Trial& trial,
                         const std::string& job_dir, bool succeeded) override;
  std::vector<jobs::HypertuneEntry> PollMetrics(
      const std::string& trial_name) override;

 private:
  // The read-only channel mounts and the checkpoint mount of `request`.
  absl::StatusOr<std::vector<jobs::ContainerMount>> DataMounts(
      const cairn::v1::SageMakerCreateTrainingJobRequest& request) const;
  // Prepares host `index`'s tree and fits `spec` to the contract.
  absl::Status PrepareHost(
      const cairn::v1::SageMakerCreateTrainingJobRequest& request,
      const std::string& job_dir, int index,
      const std::vector<jobs::ContainerMount>& data, jobs::JobSpec& spec) const;

  const ObjectRoot objects_;
  const jobs::JobUser job_user_;
  const int64_t host_memory_bytes_;

  // What is watched of a running job's logs: its MetricDefinitions (null
  // without any) and each host's log times (log_times.h).
  struct Watch {
    std::unique_ptr<LogMetrics> metrics;
    std::vector<LogTimesWriter> times;
  };

  absl::Mutex mu_;
  // The watch of each running SageMaker job, by trial name. Polled outside
  // mu_ (the job runner's passes never overlap).
  std::map<std::string, std::shared_ptr<Watch>> watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TRAINING_RUN_H_
