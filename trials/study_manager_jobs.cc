// Study controller: the hooks of the job runner (studies with a job
// template, job records, failed trials). See study_manager.h for the
// contract.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/job_studies.h"
#include "api/trial_states.h"
#include "spdlog/spdlog.h"
#include "trials/study_loading.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Trial;
using study_manager_internal::Finish;

namespace {

// UpdateTrialJob under the study's lock.
absl::Status UpdateJobLocked(StudyState& st, int64_t trial_id,
                             const std::string& name,
                             const cairn::v1::TrialJob& job,
                             StudyDataStore* store, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  absl::StatusOr<const Trial*> found = st.FindTrial(trial_id, name);
  if (!found.ok()) return found.status();
  return st.WriteTrial(store, WithJob(**found, job), scope);
}

// FailTrial (`end` FAILED, outcome "failed") and CancelTrial (CANCELLED,
// "cancelled") under the study's lock.
absl::StatusOr<Trial> EndLocked(StudyState& st, int64_t trial_id,
                                const std::string& name, Trial::State end,
                                const std::string& reason,
                                const study_manager_internal::Deps& deps,
                                WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  absl::StatusOr<const Trial*> found = st.FindPendingTrial(trial_id, name);
  if (!found.ok()) return found.status();
  Trial t = **found;
  t.set_state(end);
  t.set_infeasible_reason(reason);
  *t.mutable_end_time() = util::ToProtoTimestamp(deps.clock->Now());
  if (absl::Status s = st.WriteTrial(deps.store, t, scope); !s.ok()) return s;
  st.last_measurement.erase(t.id());
  if (deps.observer != nullptr) {
    deps.observer->OnTrialFinished(
        {st.study.name(), st.study.display_name()},
        end == Trial::FAILED ? "failed" : "cancelled");
  }
  if (absl::Status s = st.AdvanceState(deps.store, scope); !s.ok()) return s;
  return t;
}

}  // namespace

std::vector<JobStudyView> StudyManager::JobStudies() {
  // Failed: launch nothing more (the in-memory state is ahead of the disk).
  // The job runner calls this every tick: it also drives recovery.
  if (!CheckWritable().ok()) return {};
  std::vector<JobStudyView> out;
  for (const auto& s : AllStudies()) {
    absl::MutexLock lock(&s->mu);
    if (s->deleted || !api::IsJobStudy(s->study.spec())) continue;
    JobStudyView view;
    view.study_id = s->id;
    view.study = s->View();
    // A study with nothing pending and no live job needs no trials: it
    // stays unloaded.
    if (!s->loaded && s->summary.pending() == 0 &&
        s->summary.live_jobs_of_ended == 0) {
      out.push_back(std::move(view));
      continue;
    }
    if (absl::Status st = EnsureLoaded(store_, *s); !st.ok()) {
      spdlog::error("loading the trials of {}: {}", s->study.name(),
                    std::string(st.message()));
      continue;
    }
    for (const auto& [id, t] : s->trials) {
      if (api::IsPendingState(t.state())) {
        view.pending.push_back(t);
      } else if (api::HasLiveJob(t)) {
        view.ended_with_live_job.push_back(t);
      }
    }
    out.push_back(std::move(view));
  }
  return out;
}

absl::Status StudyManager::UpdateTrialJob(const std::string& trial_name,
                                          const cairn::v1::TrialJob& job) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::Status result;
  {
    LockedStudy lock(st, &scope);
    result = UpdateJobLocked(st, tn->trial_id, trial_name, job, store_, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

absl::StatusOr<int64_t> StudyManager::LastReportedStep(
    const std::string& trial_name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  absl::MutexLock lock(&st.mu);
  if (absl::Status s = st.FindTrial(tn->trial_id, trial_name).status();
      !s.ok()) {
    return s;
  }
  auto last = st.last_measurement.find(tn->trial_id);
  return last == st.last_measurement.end() ? -1 : last->second.step_count();
}

absl::StatusOr<Trial> StudyManager::FailTrial(const std::string& trial_name,
                                              const std::string& reason) {
  return EndTrial(trial_name, Trial::FAILED, reason);
}

absl::StatusOr<Trial> StudyManager::CancelTrial(const std::string& trial_name,
                                                const std::string& reason) {
  return EndTrial(trial_name, Trial::CANCELLED, reason);
}

absl::StatusOr<Trial> StudyManager::EndTrial(const std::string& trial_name,
                                             Trial::State end,
                                             const std::string& reason) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result;
  {
    LockedStudy lock(st, &scope);
    result = EndLocked(st, tn->trial_id, trial_name, end, reason,
                       {store_, clock_, observer_}, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
