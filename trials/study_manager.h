// The study controller: every study's state in memory, written through to the
// Store before any change is acknowledged, with designers proposing trials.
//
// Semantics follow Vizier: SuggestTrials hands out ACTIVE trials, honouring
// max_trials (all trials count, whatever their state) and max_parallel_trials
// (pending = REQUESTED, ACTIVE or STOPPING); a client that asks again with the
// same client_id while its trials are pending gets those trials back. A study
// whose budget is spent (or whose search space is exhausted) becomes
// COMPLETED once no trial is pending, and then suggests nothing, saying why.
//
// Recovery: Open() reads every study's record and its trial summary (the
// store's c/ record: counts by state and best values), not its trials, so a
// restart costs O(studies) whatever the number of trials. A study's trials
// are read the first time a call needs them (a trial call, a suggestion, a
// measurement, the job runner when the study has pending trials); GetStudy,
// ListStudies, SetStudyState, DeleteStudy, num_trials() and Summaries()
// answer from the summary. A store written before the summary records
// existed gets them once, at its first Open (which then reads every trial).
// Designers are pure functions of (spec, trials), so suggestion sequences
// continue exactly where they were after a crash.
//
// A StudyManager is safe for concurrent use without external locking. Calls
// on one study change its in-memory state under that study's mutex;
// different studies proceed in parallel.
//
// Suggestions never stall their study: SuggestTrials copies the study's
// trials under its mutex, runs the designer on that snapshot without it (so
// GetStudy, reports, completions and other calls on the study proceed), then
// takes the mutex again to add the new trials to the study as it is then:
// the checks run again (a study stopped or deleted meanwhile takes nothing,
// max_trials and max_parallel_trials apply to the current counts, dropping
// suggestions beyond them; ids follow trials created meanwhile). Trials
// completed meanwhile were pending in the snapshot. Concurrent
// SuggestTrials of one study are coalesced through the study's suggestion
// gate: one designer run at a time; a request that waited sees the trials
// of those before it as pending (no point is suggested twice), and one whose
// client_id got trials meanwhile gets those back without a designer run.
// With StudyManagerOptions::gp_workers, GP_BANDIT calls queue for a
// bounded pool instead (trials/suggest_pool.h): studies take turns, the
// calls of one study waiting together are answered by one designer run for
// their total count (each still gets its own trials; a repeated client_id
// gets its pending ones), and a call still queued at
// gp_queue_deadline_seconds gets quasi-random trials (suggestion_kind
// quasi_random_deadline) without waiting at the gate. Other calls, and the
// suggestions of other algorithms, never wait for the pool.
//
// Durability and group commit: a mutating call computes its change under the
// study's mutex, queues the store write there (Store::Enqueue*; the store's
// commit queue is ordered, so the order of writes on disk equals the order of
// in-memory changes, also for successive updates of one trial), applies the
// change in memory, releases the mutex and only then waits for the write to
// be durable (Store::Await). So concurrent clients of one study share fsyncs.
// A call returns OK only after its write (and every earlier one) is durable.
//
// What readers observe: a call that reads a study (GetStudy, GetTrial,
// ListTrials, SuggestTrials returning a client's pending trials, ...) takes
// the study's latest queued write while holding its mutex and waits for it
// to be durable before returning. So every call that returns OK returns only
// state that is on disk; a reader may wait up to one group commit behind a
// concurrent writer. Exceptions, not client-facing: Summaries(),
// num_studies(), num_trials() (monitoring) may include changes whose writes
// are still in flight.
//
// Creating and deleting a study: the store writes these synchronously, and
// no mutex is held meanwhile. CreateStudy reserves the display name under
// mu_, writes the study, then adds it under mu_: until then it is NotFound
// (never half made), and a failed write leaves only the name free again.
// DeleteStudy marks the study as being deleted under its mutex, writes the
// deletion, then marks it deleted (or clears the mark if the write failed)
// and removes it from mu_'s maps; calls on that study wait for the outcome
// (and then find it deleted), others proceed.
//
// Failure: if a store write fails (disk full, I/O error), the in-memory state
// is ahead of the disk. The call that saw the failure rebuilds every study
// from the store (which refuses all writes until it resumes, see
// store/store.h), so reads keep answering with what is on disk. Writes fail
// with the store's error (ResourceExhausted when the disk is full,
// Unavailable otherwise, naming the store path) and JobStudies() returns
// nothing until the store is writable again: each write call and
// CheckWritable() ask the store to resume (at most once a second), and the
// first that succeeds ends the failed state. No restart needed.
//
// Reserve: with StudyManagerOptions::min_free_bytes, new studies and new
// trials are refused (ResourceExhausted) while the store's file system has
// less free space than that, so that running trials can still report and
// complete.
#ifndef CAIRN_TRIALS_STUDY_MANAGER_H_
#define CAIRN_TRIALS_STUDY_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cairn/v1/study.pb.h"
#include "store/store.h"
#include "trials/observer.h"
#include "trials/study_summary.h"
#include "trials/suggest_result.h"
#include "tuner/designer.h"
#include "tuner/early_stopping.h"
#include "util/clock.h"

namespace cairn {

// A study that runs its trials as training jobs, as the job runner sees it.
struct JobStudyView {
  int64_t study_id = 0;
  cairn::v1::Study study;
  // Pending trials (REQUESTED, ACTIVE, STOPPING) in id order.
  std::vector<cairn::v1::Trial> pending;
  // Ended trials whose job still runs (api::HasLiveJob), in id order: their
  // jobs run on until they exit or a stop ends them, and after a restart
  // JobRunner::Recover takes them over.
  std::vector<cairn::v1::Trial> ended_with_live_job;
};

struct StudyManagerOptions {
  // Not owned; must outlive the manager. Default: util::Clock::Real().
  util::Clock* clock = nullptr;
  // Not owned; may be null (no hooks). Must outlive the manager.
  StudyObserver* observer = nullptr;
  // Extra validation of a new study's spec (e.g. the job runner checking the
  // job template against its jobs root). May be empty.
  std::function<absl::Status(const cairn::v1::StudySpec&)> validate_spec;
  // Free bytes the store's file system must keep for new studies and
  // trials to be accepted (see Reserve above). 0: no reserve.
  uint64_t min_free_bytes = 0;
  // Makes a study's designer from its spec (tests inject designers here).
  // Empty: tuner::CreateDesigner.
  std::function<absl::StatusOr<std::unique_ptr<tuner::Designer>>(
      const cairn::v1::StudySpec&)>
      create_designer;
  // Threads that run GP_BANDIT suggestions (trials/suggest_pool.h): studies
  // take turns and one study's waiting calls share one designer run. Other
  // studies' suggestions never queue there (they run on the caller's
  // thread). 0: no pool, every suggestion runs on its caller's thread.
  // Default: 0 (cairnd: --gp-workers, 1).
  int gp_workers = 0;
  // Seconds a GP_BANDIT call may wait in the pool's queue; past it the call
  // is answered with quasi-random points (suggestion_kind
  // quasi_random_deadline, counted by StudyObserver::OnDeadlineFallbacks).
  // 0: no limit. Default: 0 (cairnd: --gp-suggest-deadline).
  double gp_queue_deadline_seconds = 0;
};

struct TrialPage {
  std::vector<cairn::v1::Trial> trials;
  std::string next_page_token;
};

struct StudyPage {
  std::vector<cairn::v1::Study> studies;
  std::string next_page_token;
};

// What GetMetricHistory reads (limits in api/limits.h).
struct MetricHistoryQuery {
  std::string metric_id;
  // Points per page; 0 means kDefaultHistoryPageSize, at most
  // kMaxHistoryPageSize. Ignored with max_points.
  int page_size = 0;
  // Empty, or a next_page_token of a call with the same query.
  std::string page_token;
  // Only points with start_step <= step <= end_step.
  std::optional<int64_t> start_step;
  std::optional<int64_t> end_step;
  // 0: every point, paged. Otherwise 2 to kMaxHistoryPageSize: the whole
  // range in one page, downsampled (trials/curve_downsampler.h).
  int max_points = 0;
};

struct MetricHistoryPage {
  // One Measurement per point, holding only the queried metric.
  std::vector<cairn::v1::Measurement> points;
  // Empty on the last page.
  std::string next_page_token;
};

// One measurement for one trial, as received from a client.
struct MeasurementReport {
  std::string trial_name;
  cairn::v1::Measurement measurement;
};

// The manager's per-study state and the store writes of one call; defined in
// trials/study_state.h, internal to trials/.
struct StudyState;
struct SuggestAsk;
class SuggestPool;
struct WriteScope;

class StudyManager {
 public:
  // Recovers every study from `store` (not owned; must outlive the manager).
  static absl::StatusOr<std::unique_ptr<StudyManager>> Open(
      StudyDataStore* store, const StudyManagerOptions& options);

  StudyManager(const StudyManager&) = delete;
  StudyManager& operator=(const StudyManager&) = delete;
  ~StudyManager();

  // --- Studies. Errors: InvalidArgument (bad spec or name, naming the field
  // and value), NotFound, AlreadyExists (display name taken). ---
  // CreateStudy keeps study.creator (the service sets it to the caller); a
  // study.state of INACTIVE creates it paused (with study.inactive_reason).
  // The stored spec records its defaults (api/study_defaults.h): an unset
  // algorithm as GP_BANDIT, an unset seed as a random one.
  absl::StatusOr<cairn::v1::Study> CreateStudy(const cairn::v1::Study& study);
  absl::StatusOr<cairn::v1::Study> GetStudy(const std::string& name);
  absl::StatusOr<cairn::v1::Study> LookupStudy(const std::string& display_name);
  // page_size 0 means 100. page_token is opaque (from next_page_token).
  absl::StatusOr<StudyPage> ListStudies(int page_size,
                                        const std::string& page_token);
  absl::Status DeleteStudy(const std::string& name);
  // ACTIVE, INACTIVE or COMPLETED. FailedPrecondition to reactivate a study
  // whose max_trials is already reached. INACTIVE (stop) on a COMPLETED or
  // FAILED study is OK: the study keeps its state and inactive_reason,
  // which the result shows, and the jobs of its trials that still run are
  // ended (as StopTrial ends an ended trial's job).
  absl::StatusOr<cairn::v1::Study> SetStudyState(const std::string& name,
                                                 cairn::v1::Study::State state);
  // Sets `labels` and removes `remove_keys` from the study's
  // StudySpec.labels, durably, in any state. InvalidArgument (naming the
  // key) for an empty key, a key both set and removed, or a result of more
  // than api::kMaxLabels labels; the study is then unchanged.
  absl::StatusOr<cairn::v1::Study> UpdateStudyLabels(
      const std::string& name,
      const google::protobuf::Map<std::string, std::string>& labels,
      const std::vector<std::string>& remove_keys);

  // --- Trials. ---
  // count >= 1. Returns fewer trials (possibly none) with a message when the
  // study is not ACTIVE, its budget or parallelism is used up, or its space
  // is exhausted; a study with spec.repeat_points_when_exhausted gets the
  // points suggested before again instead, and stays ACTIVE.
  absl::StatusOr<SuggestResult> SuggestTrials(const std::string& parent,
                                              int count,
                                              const std::string& client_id);
  // A manual trial with given parameters (validated against the spec). With
  // a final_measurement it is created SUCCEEDED, else ACTIVE. Counts toward
  // max_trials (ResourceExhausted when the budget is spent).
  absl::StatusOr<cairn::v1::Trial> CreateTrial(const std::string& parent,
                                               const cairn::v1::Trial& trial);
  // With its last kMaxTrialMeasurements measurements (api/limits.h, read
  // from the store) and measurements_truncated set if it has more:
  // GetMetricHistory reads a whole curve.
  absl::StatusOr<cairn::v1::Trial> GetTrial(const std::string& name);
  // page_size 0 means 1000. include_measurements: as GetTrial, per trial.
  // A page ends early (fewer trials, next_page_token set) where its trials
  // would exceed kMaxListTrialsBytes (limits.h); it holds at least one.
  absl::StatusOr<TrialPage> ListTrials(const std::string& parent, int page_size,
                                       const std::string& page_token,
                                       bool include_measurements);
  absl::Status DeleteTrial(const std::string& name);

  // Appends an intermediate measurement to a pending trial (a REQUESTED one
  // becomes ACTIVE). Any metric id may be tracked; values must be finite.
  // An unset elapsed_duration is filled in from the trial's start time.
  // In a resumed job attempt (job().attempts() > 1) a measurement whose
  // step is at or below the trial's last stored step is dropped (OK, not
  // stored): a job resumed from a checkpoint replays steps.
  // Returns the trial without its measurement list.
  absl::StatusOr<cairn::v1::Trial> AddMeasurement(
      const std::string& trial_name, const cairn::v1::Measurement& m);
  // Validates all, then writes all in one durable batch (all or nothing),
  // less the steps resumed jobs repeat (see AddMeasurement). Returns the
  // number written.
  absl::StatusOr<int64_t> AddMeasurements(
      const std::vector<MeasurementReport>& reports);
  // AddMeasurements, and in the same durable batch (one fsync) replaces the
  // job record of trial `job_trial` with `job`: the job runner's metric
  // collection, which records how far it has read a job's metrics file.
  // If a measurement is rejected nothing is written (the job record neither).
  absl::StatusOr<int64_t> AddMeasurementsWithJob(
      const std::vector<MeasurementReport>& reports,
      const std::string& job_trial, const cairn::v1::TrialJob& job);

  // Completes a pending trial. With `final_measurement` it must report every
  // objective metric of the spec and no other; without one, the last
  // reported measurement becomes final (FailedPrecondition if none, except
  // in a study without parameters, whose trial then completes with an
  // empty final measurement when its last one cannot be final).
  // FailedPrecondition if the trial is already completed.
  absl::StatusOr<cairn::v1::Trial> CompleteTrial(
      const std::string& name,
      const std::optional<cairn::v1::Measurement>& final_measurement,
      bool infeasible, const std::string& infeasible_reason);
  // Asks a pending trial to stop (state STOPPING); its worker (or the job
  // runner, once its job ended) completes it. On an ended trial whose job
  // still runs (api::HasLiveJob), asks the job runner to end that job (its
  // record becomes STOPPING) and returns the trial unchanged otherwise;
  // FailedPrecondition ("already STATE") for an ended trial without one.
  absl::StatusOr<cairn::v1::Trial> StopTrial(const std::string& name);
  // Whether the trial should stop (it is STOPPING) and why: the early
  // stopping rule's reason, or "trial was asked to stop" (StopTrial).
  absl::StatusOr<tuner::StopDecision> CheckEarlyStopping(
      const std::string& trial_name);
  // The best SUCCEEDED trial (one objective) or the Pareto front (several).
  absl::StatusOr<std::vector<cairn::v1::Trial>> ListOptimalTrials(
      const std::string& parent);
  // One page of one metric's learning curve: points (step, elapsed, the
  // metric) in report order, read from the store one page at a time (with
  // max_points: two passes over the trial's measurements, holding at most
  // max_points). See MetricHistoryQuery. InvalidArgument for an empty
  // metric_id, a page_size or max_points out of range, start_step >
  // end_step or a bad page_token (naming the field and value); NotFound for
  // an unknown trial.
  absl::StatusOr<MetricHistoryPage> GetMetricHistory(
      const std::string& trial_name, const MetricHistoryQuery& query);

  // --- Training jobs (used by the job runner). ---
  // Every study with a job template (job_template.command non-empty).
  std::vector<JobStudyView> JobStudies();
  // Persists the job record of a trial (any state). A job that StopTrial
  // or SetStudyState marked STOPPING after its trial ended stays STOPPING
  // when `job` says RUNNING (the runner's copy may predate the stop).
  absl::Status UpdateTrialJob(const std::string& trial_name,
                              const cairn::v1::TrialJob& job);
  // The step_count of the last measurement stored for a pending trial, or -1
  // if it has none (or is no longer pending). NotFound for an unknown trial.
  absl::StatusOr<int64_t> LastReportedStep(const std::string& trial_name);
  // Marks a pending trial FAILED with `reason` (its job gave up); the study
  // becomes FAILED once FailureLimitReached (trials/failure_policy.h).
  absl::StatusOr<cairn::v1::Trial> FailTrial(const std::string& trial_name,
                                             const std::string& reason);
  // Ends a pending trial CANCELLED with `reason`: it was stopped (its study
  // stopped, or a `trial stop`) before it reported a result. Not a failure:
  // neither the failure policy nor the study's failed_count counts it.
  absl::StatusOr<cairn::v1::Trial> CancelTrial(const std::string& trial_name,
                                               const std::string& reason);
  // The trial without measurements.
  absl::StatusOr<cairn::v1::Trial> GetTrialBasic(const std::string& name);

  // OK when the store accepts writes. Otherwise asks it to resume (at most
  // once a second, after rebuilding memory from it) and returns OK if that
  // worked, else the error writes fail with. Called by every write; cairnd
  // also calls it periodically so recovery needs no client.
  absl::Status CheckWritable();

  // Counts of studies and trials now (trials from the summaries: no trial
  // is read).
  int64_t num_studies() const;
  int64_t num_trials() const;
  // A consistent snapshot of every study, for monitoring. A study whose
  // trials are not loaded yet has no running_metrics (counts and best values
  // come from its summary).
  std::vector<StudySummary> Summaries() const;

  // GP_BANDIT calls of study `study_id` waiting in the suggest pool's
  // queue, not yet taken by a designer run (tests; 0 without a pool).
  int TEST_GpAsksWaiting(int64_t study_id) const;

 private:
  StudyManager(StudyDataStore* store, const StudyManagerOptions& options);

  // The study, its trials loaded (read from the store on its first use
  // after a restart; see Recovery). NotFound for an unknown study.
  absl::StatusOr<std::shared_ptr<StudyState>> FindStudy(int64_t study_id) const;
  // The study as it is, maybe unloaded: for calls that need only its record
  // and its counts (GetStudy, ListStudies, SetStudyState, DeleteStudy).
  absl::StatusOr<std::shared_ptr<StudyState>> PeekStudy(int64_t study_id) const;
  // Every study, in id order (a snapshot of studies_; lock each to read it).
  std::vector<std::shared_ptr<StudyState>> AllStudies() const;
  // Checks a new study's display name and spec (also with validate_spec_).
  absl::Status ValidateNewStudy(const cairn::v1::Study& request) const;
  // Takes `display_name` for a study being created (AlreadyExists if a
  // study has it or is being created with it).
  absl::Status ReserveDisplayName(const std::string& display_name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds a study the store just created (freeing its reservation) and
  // returns its view.
  cairn::v1::Study AddCreatedStudy(int64_t study_id,
                                   const cairn::v1::Study& study,
                                   std::unique_ptr<tuner::Designer> designer)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Marks `st` as being deleted (see StudyState::deleting); NotFound (naming
  // `name`) if it is deleted already.
  static absl::Status BeginDeletion(StudyState& st, const std::string& name);
  // Ends a deletion begun by BeginDeletion: removes the study if `written`
  // is OK, else keeps it. Returns `written`.
  absl::Status EndDeletion(StudyState& st, absl::Status written)
      ABSL_LOCKS_EXCLUDED(mu_);

  // AddMeasurements and AddMeasurementsWithJob (job_trial and job both null,
  // or both set).
  absl::StatusOr<int64_t> AddMeasurementsImpl(
      const std::vector<MeasurementReport>& reports,
      const std::string* job_trial, const cairn::v1::TrialJob* job);

  // ResourceExhausted when the store's file system has less than
  // min_free_bytes free (the reserve); OK otherwise.
  absl::Status CheckReserve() const;
  // After a failed write: rebuilds studies_ from the store, once per
  // failure (until the store resumes). REQUIRES: no study mutex held.
  void RecoverFromFailedWrite() ABSL_LOCKS_EXCLUDED(recovery_mu_, mu_);
  // ReloadFromStore unless memory was already rebuilt since the store
  // started failing; whether it has been.
  bool ReloadOnce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(recovery_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces every study's in-memory state with the store's.
  absl::Status ReloadFromStore() ABSL_EXCLUSIVE_LOCKS_REQUIRED(recovery_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until every write in `writes` is durable. On a failure rebuilds
  // memory from the store (RecoverFromFailedWrite) and returns the error.
  // `timed`: report the wait to the observer as a store write.
  absl::Status AwaitWrites(
      const std::vector<std::shared_ptr<PendingWrite>>& writes, bool timed);
  // AwaitWrites of the writes `scope` collected, timed if the call wrote.
  absl::Status AwaitScope(const WriteScope& scope);
  // AwaitScope, then reports the call's phases (scope.times and the wait)
  // to the observer as `call`'s (OnCallPhase); `designs`: the call runs a
  // designer (its phase is reported, 0 when none ran).
  absl::Status AwaitAndReport(std::string_view call, const WriteScope& scope,
                              bool designs);
  // A trial name's study and trial id. InvalidArgument for a malformed
  // name (naming `field`), NotFound for an unknown study. The trial itself
  // is not looked up.
  struct TrialRef {
    std::shared_ptr<StudyState> study;
    int64_t trial_id = 0;
  };
  absl::StatusOr<TrialRef> ResolveTrial(const std::string& name,
                                        const char* field) const;
  absl::StatusOr<std::shared_ptr<StudyState>> FindStudyByName(
      const std::string& name, const char* field) const;
  absl::StatusOr<std::shared_ptr<StudyState>> PeekStudyByName(
      const std::string& name, const char* field) const;
  // Answers `asks` (all of `st`) with one designer run for their total
  // count (see SuggestTrials), collecting in `scope` the writes the answers
  // rest on (not awaited here); `deadline_fallback`: with the quasi-random
  // designer instead of the study's.
  void AnswerAsks(StudyState& st, const std::vector<SuggestAsk*>& asks,
                  bool deadline_fallback, WriteScope* scope);
  // The suggest pool's batch: AnswerAsks on study `study_id`.
  void AnswerPooledAsks(int64_t study_id, const std::vector<SuggestAsk*>& asks);
  // Whether `st`'s suggestions go through suggest_pool_ (GP_BANDIT).
  bool UsesSuggestPool(StudyState& st) const;
  // FailTrial and CancelTrial: ends a pending trial in state `end`.
  absl::StatusOr<cairn::v1::Trial> EndTrial(const std::string& trial_name,
                                            cairn::v1::Trial::State end,
                                            const std::string& reason);

  StudyDataStore* const store_;
  util::Clock* const clock_;
  StudyObserver* const observer_;
  const std::function<absl::Status(const cairn::v1::StudySpec&)> validate_spec_;
  const std::function<absl::StatusOr<std::unique_ptr<tuner::Designer>>(
      const cairn::v1::StudySpec&)>
      create_designer_;

  // State below is protected by mu_. Each StudyState has its own mutex for
  // its contents; lock order: mu_ before a study's mutex, never the reverse.
  mutable absl::Mutex mu_;
  std::map<int64_t, std::shared_ptr<StudyState>> studies_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> by_display_name_ ABSL_GUARDED_BY(mu_);
  // Display names of the studies whose creation is being written.
  std::set<std::string> creating_ ABSL_GUARDED_BY(mu_);

  const uint64_t min_free_bytes_;

  // Serialises rebuilding memory and resuming the store (see Failure).
  // Lock order: recovery_mu_ before mu_.
  absl::Mutex recovery_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Memory was rebuilt from the store since its writes started failing.
  bool reloaded_ ABSL_GUARDED_BY(recovery_mu_) = false;
  // When the store was last asked to resume.
  absl::Time last_resume_ ABSL_GUARDED_BY(recovery_mu_) = absl::InfinitePast();

  const absl::Duration suggest_queue_deadline_;
  // Null without gp_workers. Last, so its threads stop before the state
  // they use is destroyed.
  std::unique_ptr<SuggestPool> suggest_pool_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_STUDY_MANAGER_H_
