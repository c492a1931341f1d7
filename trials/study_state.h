// The in-memory state of one study inside the StudyManager, and the RAII lock
// through which every call reaches it. Internal to trials/.
//
// Thread safety: a StudyState's contents are guarded by its `mu`; hold it
// through a LockedStudy. The StudyManager's lock order applies: its own mutex
// before a study's, never the reverse; several studies in id order.
#ifndef CAIRN_TRIALS_STUDY_STATE_H_
#define CAIRN_TRIALS_STUDY_STATE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cairn/v1/study.pb.h"
#include "store/store.h"
#include "trials/trial_summary.h"
#include "trials/trial_table.h"
#include "trials/write_scope.h"
#include "tuner/designer.h"
#include "tuner/early_stopping.h"

namespace cairn {

// Records a write just queued for a study (call under the study's mutex, in
// the same critical section that changes its in-memory state): it becomes
// `*last_write` and marks `scope` as having written. Returns the error of
// `write`, if any.
absl::Status Queued(absl::StatusOr<std::shared_ptr<PendingWrite>> write,
                    std::shared_ptr<PendingWrite>* last_write,
                    WriteScope* scope);

struct StudyState {
  explicit StudyState(int64_t study_id) : id(study_id) {}

  const int64_t id;
  // The suggestion gate of a designer that is not quick (GP_BANDIT): held
  // through its snapshot, its run and its commit (never across a store
  // sync), so one such suggestion at a time runs per study. Quick
  // designers run under mu alone. Lock order: suggest_mu before mu.
  absl::Mutex suggest_mu;
  absl::Mutex mu;
  // State below is protected by mu.
  cairn::v1::Study study ABSL_GUARDED_BY(mu);
  // `trials`, `max_trial_id`, `last_measurement` and `curves` are in memory.
  // After a restart a study starts unloaded (only `study`, `summary` and
  // `designer`) and is loaded on first use (EnsureLoaded in
  // trials/study_loading.h); loaded never goes back to false while callers
  // may hold the study.
  bool loaded ABSL_GUARDED_BY(mu) = false;
  // What the trials sum up to, current whether loaded or not; every trial
  // write carries it to the store's c/ record in the same batch.
  TrialSummary summary ABSL_GUARDED_BY(mu);
  TrialTable trials ABSL_GUARDED_BY(mu);
  int64_t max_trial_id ABSL_GUARDED_BY(mu) = 0;
  // Shared so that a suggestion can run it outside mu (one at a time, under
  // suggest_mu) while a rebuild after a failed write replaces it. A quick
  // designer (tuner::Designer::quick) runs under mu instead.
  std::shared_ptr<tuner::Designer> designer ABSL_GUARDED_BY(mu);
  // Latest measurement of each pending trial (the default final one).
  std::map<int64_t, cairn::v1::Measurement> last_measurement
      ABSL_GUARDED_BY(mu);
  // Objective curves of every trial, kept only for studies with an
  // early-stopping rule (the rules compare a trial with all others).
  std::map<int64_t, tuner::Curve> curves ABSL_GUARDED_BY(mu);
  // The designer returned nothing: the search space is exhausted.
  bool exhausted ABSL_GUARDED_BY(mu) = false;
  // Set once the study is deleted; late callers holding a pointer see it.
  bool deleted ABSL_GUARDED_BY(mu) = false;
  // Set while DeleteStudy writes the deletion (without holding mu): a
  // LockedStudy waits until it is cleared, so that no write of the study is
  // queued behind its deletion.
  bool deleting ABSL_GUARDED_BY(mu) = false;
  // The latest store write queued for this study (null if none yet). Writes
  // are queued under mu, so queue order equals the order of in-memory
  // changes; awaiting this one (the queue is ordered) makes every change
  // made so far durable.
  std::shared_ptr<PendingWrite> last_write ABSL_GUARDED_BY(mu);

  // Takes over the contents of `from` (this study freshly recovered from
  // the store after a failed write), keeping this object, which callers may
  // hold. Forgets the latest queued write (it failed). `from` is left empty.
  void ReplaceContents(StudyState& from) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(from.mu);

  // Forgets the trials, measurements and curves (loaded becomes false):
  // only for a study no caller holds yet (recovery at Open).
  void Unload() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // The spec has an early-stopping rule and an objective to apply it to.
  bool HasEarlyStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Adds the objective value of `m` (if reported) to the trial's curve.
  void AddToCurve(int64_t trial_id, const cairn::v1::Measurement& m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Marks the curve of trial `trial_id` complete (it SUCCEEDED).
  void CompleteCurve(int64_t trial_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Waits (releasing mu meanwhile) until no deletion of the study is in
  // flight.
  void AwaitNoDeletion() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  int64_t CountPending() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return trials.pending();
  }

  // The study with output-only counts filled in (from `summary`: also for
  // an unloaded study).
  cairn::v1::Study View() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // The trial `trial_id`; `name` is its resource name, for the error.
  // NotFound if the study has no such trial. The pointer stays valid until
  // the trial is Put again or erased.
  absl::StatusOr<const cairn::v1::Trial*> FindTrial(
      int64_t trial_id, absl::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // FindTrial, and FailedPrecondition unless the trial is REQUESTED, ACTIVE
  // or STOPPING ("trial NAME is already STATE").
  absl::StatusOr<const cairn::v1::Trial*> FindPendingTrial(
      int64_t trial_id, absl::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Queues the write of `trial` (with the summary after it) in `scope`, then
  // puts it in `trials`. On a failed enqueue nothing changes and the error
  // is returned. REQUIRES: loaded.
  absl::Status WriteTrial(StudyStore* store, cairn::v1::Trial trial,
                          WriteScope* scope) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Asks the job runner to end the job of ended trial `t` that still runs
  // (api::HasLiveJob): its job record becomes STOPPING with `why` as its
  // message, queued in `scope`; the runner sends SIGTERM, SIGKILL after the
  // grace, and records the job's end. A job already STOPPING, and a trial
  // without a live job, are left as they are. REQUIRES: loaded.
  absl::Status StopLiveJob(StudyStore* store, const cairn::v1::Trial& t,
                           const std::string& why, WriteScope* scope)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // The state the study should move to given its trials, if it changes:
  // FAILED when FailureLimitReached (trials/failure_policy.h), COMPLETED when
  // the budget is spent (or the space exhausted) and nothing is pending.
  bool NextState(cairn::v1::Study::State* state, std::string* reason) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Moves the study to the state NextState() gives, if it changes, queueing
  // the write in `scope`. A move to FAILED is logged (spdlog warn).
  absl::Status AdvanceState(StudyStore* store, WriteScope* scope)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

// `t` with job record `job`, except that a stop asked for after `t` ended
// (StudyState::StopLiveJob) holds: a RUNNING `job` (the job runner's copy,
// which may predate the stop) keeps the stored STOPPING and its message.
cairn::v1::Trial WithJob(cairn::v1::Trial t, const cairn::v1::TrialJob& job);

// Holds a study's mutex for one critical section of a StudyManager call,
// once no deletion of the study is in flight (AwaitNoDeletion), adding the
// wait to scope->times.lock_wait. On release it records the study's latest
// queued write in `scope`, so the call can await it (after unlocking)
// before returning.
//
//   StudyState& st = **found;  // found: StatusOr<shared_ptr<StudyState>>
//   WriteScope scope;
//   {
//     LockedStudy lock(st, &scope);
//     ... st.trials ...  // -Wthread-safety knows st.mu is held.
//   }
//   return Finish<...>(AwaitScope(scope), ...);
//
// Finding the study (a StatusOr) stays outside this class on purpose: a lock
// handed out inside a StatusOr or a shared_ptr is invisible to clang's
// -Wthread-safety (clang 14), so the caller keeps the shared_ptr alive and
// the lock takes the study by reference.
class ABSL_SCOPED_LOCKABLE LockedStudy {
 public:
  // REQUIRES: `study` and `scope` outlive this object.
  LockedStudy(StudyState& study, WriteScope* scope)
      ABSL_EXCLUSIVE_LOCK_FUNCTION(study.mu);
  ~LockedStudy() ABSL_UNLOCK_FUNCTION();
  LockedStudy(const LockedStudy&) = delete;
  LockedStudy& operator=(const LockedStudy&) = delete;

 private:
  StudyState& study_;
  WriteScope* const scope_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_STUDY_STATE_H_
