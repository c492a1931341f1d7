// AI Platform Training jobs on Cairn: submit, read, list and cancel jobs.
// A job is a study (aiplatform/job_study.h) that cairnd's job runner runs,
// plus a JobRecord in the store (j/<job id>) with what was submitted; its
// state and trainingOutput are derived from the study when read
// (aiplatform/job_view.h), so they survive a kill -9 of cairnd as the study
// does.
//
// Submit, in order: checks the id (rules, then unique), the config (as a
// study) and the package; writes the record marked submit_pending; stages
// the package in <jobs-root>/<JOB_ID>.package (job ids hold no '.', so it
// never meets a job dir); creates the study paused (INACTIVE, so no trial
// is suggested yet); for resumePreviousJobId copies the earlier job's
// successful trials into it as prior data (raising its max_trials by their
// number, so the new job runs its own maxTrials, and before any trial of
// its own exists); writes the record complete; starts the study. A failure
// at any step undoes the earlier ones: a refused job leaves nothing stored.
// A crash does too: Open undoes a submission whose record is still pending
// and starts the study of one whose record was complete.
//
// Scheduling: a background thread cancels, once a second, every job past
// scheduling.maxRunningTime or maxWaitTime (aiplatform/job_schedule.h).
//
// A JobManager is thread-safe.
#ifndef CAIRN_AIPLATFORM_JOB_MANAGER_H_
#define CAIRN_AIPLATFORM_JOB_MANAGER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "aiplatform/job_filter.h"
#include "aiplatform/package_staging.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"
#include "store/store.h"
#include "trials/study_manager.h"
#include "util/clock.h"

namespace cairn::aiplatform {

struct JobManagerOptions {
  // --jobs-root: staging dirs and default job dirs lie here. Required.
  std::string jobs_root;
  // The interpreter of `python3 -m MODULE`. Default: python3 (on PATH).
  std::string python = "python3";
  // How often scheduling limits are checked; zero: never by itself (tests
  // call EnforceSchedule).
  absl::Duration schedule_interval = absl::Seconds(1);
  // Tests only: called after each step of a submission with its name
  // ("record_pending", "study_created", "trials_copied", "record_written").
  std::function<void(absl::string_view step)> submit_hook;
};

class JobManager {
 public:
  // Loads every job record, finishes cancellations an earlier cairnd left
  // half done, undoes or finishes submissions a crash cut short (see
  // above), and starts the scheduling thread. `store`, `studies` and `clock`
  // are not owned and must outlive the manager.
  static absl::StatusOr<std::unique_ptr<JobManager>> Open(
      JobRecordStore* store, StudyManager* studies, util::Clock* clock,
      const JobManagerOptions& options);

  // Submits `job` (jobId, labels, trainingInput; output fields ignored) with
  // its package; the study's creator is `creator`. An empty `package` is
  // read from trainingInput.packageUris (local archives on this machine:
  // aiplatform/package_read.h) when it has any. Returns the Job as
  // GetJob would. InvalidArgument naming the field for a bad id, config or
  // package; AlreadyExists for a job id (or study display name) in use;
  // NotFound for an unknown resumePreviousJobId.
  absl::StatusOr<cairn::v1::Job> Submit(const cairn::v1::Job& job,
                                        const PackageFiles& package,
                                        const std::string& creator)
      ABSL_LOCKS_EXCLUDED(mu_);
  // NotFound for an unknown job id.
  absl::StatusOr<cairn::v1::Job> Get(const std::string& job_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The jobs (in job id order) that `filter` matches, after the job id
  // `page_token` ("": from the first), at most
  // `page_size` (0: every one); next_page_token is the page_token of the
  // next page when more may follow. InvalidArgument for a negative
  // page_size.
  struct JobPage {
    std::vector<cairn::v1::Job> jobs;
    std::string next_page_token;
  };
  absl::StatusOr<JobPage> List(const JobFilter& filter, int page_size = 0,
                               const std::string& page_token = "")
      ABSL_LOCKS_EXCLUDED(mu_);
  // Marks the job cancelled (durably) and stops its study: its processes
  // get SIGTERM, then SIGKILL after cairnd's grace period. The job reads
  // CANCELLING until they ended, then CANCELLED. A CANCELLING job may be
  // cancelled again (its study is stopped again). FailedPrecondition for a
  // job that already ended.
  absl::StatusOr<cairn::v1::Job> Cancel(const std::string& job_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels every job past its scheduling limits; returns how many.
  int EnforceSchedule() ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the scheduling thread.
  ~JobManager();

  // The study name of the job and the ids of its own trials (no prior
  // data), in id order. NotFound for an unknown job id.
  struct Trials {
    std::string study_name;
    std::vector<int64_t> trial_ids;
    cairn::v1::Job::State state = cairn::v1::Job::STATE_UNSPECIFIED;
    // The study's job template (its replicas name the trials' logs).
    cairn::v1::TrialJobTemplate job_template;
  };
  absl::StatusOr<Trials> JobTrials(const std::string& job_id)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  JobManager(JobRecordStore* store, StudyManager* studies, util::Clock* clock,
             const JobManagerOptions& options)
      : store_(store), studies_(studies), clock_(clock), options_(options) {}

  absl::StatusOr<cairn::v1::JobRecord> Record(const std::string& job_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The record's Job, read from its study (with its trials' measurements
  // if `measurements`); the study goes to `study` unless null.
  absl::StatusOr<cairn::v1::Job> View(const cairn::v1::JobRecord& record,
                                      bool measurements = true,
                                      cairn::v1::Study* study = nullptr);
  // Marks the job cancelled for `reason` (durably) and stops its study.
  absl::Status CancelFor(cairn::v1::JobRecord& record,
                         const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Open's repair of a submission a crash cut short.
  absl::Status Recover(const cairn::v1::JobRecord& record);
  // Undoes a submission: its study (if created), staging dir and record.
  absl::Status Undo(const cairn::v1::JobRecord& record,
                    const std::string& study_name);
  void Step(absl::string_view name) const;
  void ScheduleLoop();
  absl::StatusOr<std::vector<cairn::v1::Trial>> StudyTrials(
      const std::string& study_name, bool include_measurements);
  // Reserves `job_id` (unique among records and submissions under way).
  absl::Status Reserve(const std::string& job_id) ABSL_LOCKS_EXCLUDED(mu_);
  void Release(const std::string& job_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Submit's steps after the checks; each undoes itself on error.
  absl::StatusOr<cairn::v1::JobRecord> CreateJob(const cairn::v1::Job& job,
                                                 const PackageFiles& package,
                                                 const std::string& creator);
  // CreateJob's steps after the pending record: creates `study` (paused),
  // copies `prior` into it, completes `record` and starts the study.
  absl::Status StartStudy(const cairn::v1::Study& study,
                          const std::vector<cairn::v1::Trial>& prior,
                          const std::string& previous_job_id,
                          cairn::v1::JobRecord& record);
  // The successful trials of job `previous_job_id` (resumePreviousJobId).
  absl::StatusOr<std::vector<cairn::v1::Trial>> PriorTrials(
      const std::string& previous_job_id);
  // Copies `done` (of job `previous_job_id`) into `study_name` as completed
  // trials; returns their new ids.
  absl::StatusOr<std::vector<int64_t>> CopyTrials(
      const std::vector<cairn::v1::Trial>& done,
      const std::string& previous_job_id, const std::string& study_name);
  std::string StagingDir(const std::string& job_id) const;

  JobRecordStore* const store_;
  StudyManager* const studies_;
  util::Clock* const clock_;
  const JobManagerOptions options_;

  mutable absl::Mutex mu_;
  // State below is protected by mu_.
  absl::flat_hash_map<std::string, cairn::v1::JobRecord> records_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> reserved_ ABSL_GUARDED_BY(mu_);
  // Jobs known to have ended (skipped by EnforceSchedule).
  absl::flat_hash_set<std::string> ended_ ABSL_GUARDED_BY(mu_);

  absl::Notification stop_;
  std::thread schedule_thread_;
};

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_MANAGER_H_
