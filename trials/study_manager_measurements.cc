// Study controller: measurements (one durable batch for many trials, with the
// job runner's job record) and early stopping. See
// study_manager.h for the contract.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/request_limits.h"
#include "api/resource_names.h"
#include "api/trial_states.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "tuner/early_stopping.h"
#include "tuner/spec_validation.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Trial;
using study_manager_internal::Deps;
using study_manager_internal::Finish;

namespace {

using StudyMap = std::map<int64_t, std::shared_ptr<StudyState>>;

// The studies and trial ids of one AddMeasurements call.
struct ResolvedReports {
  StudyMap states;                         // Every study named, by id.
  std::vector<api::TrialName> names;       // One per report.
  std::optional<api::TrialName> job_name;  // The trial whose job record is set.
};

// Holds the mutex of every study of a call, taken in id order (so two calls
// cannot deadlock). The set is only known at run time, so -Wthread-safety
// cannot follow it: code that touches a study under it says so with
// `st.mu.AssertHeld()`, which absl checks at run time.
class StudyLocks {
 public:
  StudyLocks(const StudyMap& states, WriteScope* scope) {
    for (const auto& [id, state] : states) {
      locks_.push_back(std::make_unique<LockedStudy>(*state, scope));
    }
  }

 private:
  std::vector<std::unique_ptr<LockedStudy>> locks_;
};

// The measurement write of `report` for pending trial `name` of `st`, with
// elapsed_duration filled in from the trial's start if unset.
absl::StatusOr<MeasurementStore::MeasurementWrite> MeasurementWriteOf(
    const StudyState& st, const api::TrialName& name,
    const MeasurementReport& report, absl::Time now)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (st.deleted) {
    return absl::NotFoundError(
        absl::StrCat("study ", api::StudyName(st.id), " not found"));
  }
  absl::StatusOr<const Trial*> trial =
      st.FindTrial(name.trial_id, report.trial_name);
  if (!trial.ok()) return trial.status();
  if (!api::IsPendingState((*trial)->state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", report.trial_name, " is ",
                     Trial::State_Name((*trial)->state()),
                     "; measurements can only be added to pending trials"));
  }
  // The API's limits (metric ids, their number) for callers in the process
  // too, such as a job's metric file (jobs/hypertune.h).
  if (absl::Status s =
          api::CheckMeasurementLimits(report.measurement, "measurement");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = tuner::ValidateMeasurement(report.measurement);
      !s.ok()) {
    return s;
  }
  MeasurementStore::MeasurementWrite w{st.id, name.trial_id,
                                       report.measurement};
  if (!w.measurement.has_elapsed_duration() && (*trial)->has_start_time()) {
    *w.measurement.mutable_elapsed_duration() = util::ToProtoDuration(
        now - util::FromProtoTimestamp((*trial)->start_time()));
  }
  return w;
}

// The step of the last measurement stored (or `writes` holds) for a trial;
// -1 if none.
class LastSteps {
 public:
  int64_t Get(const StudyState& st, int64_t trial_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
    auto [it, added] = steps_.try_emplace({st.id, trial_id}, -1);
    if (added) {
      auto last = st.last_measurement.find(trial_id);
      if (last != st.last_measurement.end()) {
        it->second = last->second.step_count();
      }
    }
    return it->second;
  }
  void Set(int64_t study_id, int64_t trial_id, int64_t step) {
    steps_[{study_id, trial_id}] = step;
  }

 private:
  std::map<std::pair<int64_t, int64_t>, int64_t> steps_;
};

// Whether `w` repeats a step in a resumed job attempt (the job started more
// than once) of its trial: its step is at or below the last one stored.
// Such a report is dropped (acknowledged, not stored), so a trial that
// resumes from a checkpoint never records a step twice.
bool RepeatsStepOfResumedJob(const StudyState& st,
                             const MeasurementStore::MeasurementWrite& w,
                             LastSteps& last_steps)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  auto trial = st.trials.find(w.trial_id);
  if (trial == st.trials.end() || trial->second.job().attempts() < 2) {
    return false;
  }
  return w.measurement.step_count() <= last_steps.Get(st, w.trial_id);
}

// Every report as a store write, less the steps a resumed job repeats.
// REQUIRES: every study's mutex held.
absl::StatusOr<std::vector<MeasurementStore::MeasurementWrite>>
MeasurementWrites(const ResolvedReports& resolved,
                  const std::vector<MeasurementReport>& reports,
                  absl::Time now) {
  std::vector<MeasurementStore::MeasurementWrite> writes;
  writes.reserve(reports.size());
  LastSteps last_steps;
  for (size_t i = 0; i < reports.size(); ++i) {
    const StudyState& st = *resolved.states.at(resolved.names[i].study_id);
    st.mu.AssertHeld();
    absl::StatusOr<MeasurementStore::MeasurementWrite> w =
        MeasurementWriteOf(st, resolved.names[i], reports[i], now);
    if (!w.ok()) return w.status();
    if (RepeatsStepOfResumedJob(st, *w, last_steps)) continue;
    last_steps.Set(w->study_id, w->trial_id, w->measurement.step_count());
    writes.push_back(std::move(*w));
  }
  return writes;
}

// Queues `writes` as one store write, the latest write of every study.
// REQUIRES: every study's mutex held.
absl::Status QueueMeasurements(
    MeasurementStore* store,
    const std::vector<MeasurementStore::MeasurementWrite>& w,
    const StudyMap& states, WriteScope* scope) {
  if (w.empty()) return absl::OkStatus();
  absl::StatusOr<std::shared_ptr<PendingWrite>> queued =
      store->EnqueueAppendMeasurements(w);
  if (!queued.ok()) return queued.status();
  // One write for all studies: each study's latest write is it.
  for (const auto& [id, state] : states) {
    state->mu.AssertHeld();
    if (absl::Status s = Queued(*queued, &state->last_write, scope); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// Records the measurements just queued in memory (last measurement, curves).
// Returns the (study, trial) pairs the early-stopping rule must judge.
// REQUIRES: every study's mutex held.
std::set<std::pair<int64_t, int64_t>> ApplyMeasurements(
    std::vector<MeasurementStore::MeasurementWrite>& writes,
    const StudyMap& states) {
  std::set<std::pair<int64_t, int64_t>> to_check;
  for (MeasurementStore::MeasurementWrite& w : writes) {
    StudyState& st = *states.at(w.study_id);
    st.mu.AssertHeld();
    if (st.HasEarlyStopping()) {
      st.AddToCurve(w.trial_id, w.measurement);
      to_check.emplace(w.study_id, w.trial_id);
    }
    st.last_measurement[w.trial_id] = std::move(w.measurement);
  }
  return to_check;
}

// Early stopping: a trial the rule stops becomes STOPPING; its worker (or
// the job runner) sees that and completes it with its last measurement.
absl::Status JudgeTrial(StudyState& st, int64_t trial_id, StudyDataStore* store,
                        StudyObserver* observer, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  auto found = st.trials.find(trial_id);
  if (found == st.trials.end()) return absl::OkStatus();
  const Trial& t = found->second;
  if (t.state() != Trial::ACTIVE) return absl::OkStatus();
  // Every curve, by pointer (ShouldStop skips the trial's own).
  std::vector<const tuner::Curve*> others;
  others.reserve(st.curves.size());
  for (const auto& [id, c] : st.curves) others.push_back(&c);
  tuner::StopDecision d =
      tuner::ShouldStop(st.study.spec(), st.curves[trial_id], others);
  if (observer != nullptr) {
    observer->OnEarlyStoppingDecision(
        {st.study.name(), st.study.display_name()},
        st.study.spec().early_stopping().has_median() ? "median" : "asha",
        d.stop);
  }
  if (!d.stop) return absl::OkStatus();
  Trial stopping = t;
  stopping.set_state(Trial::STOPPING);
  (*stopping.mutable_metadata())[api::kEarlyStoppingReasonKey] = d.reason;
  return st.WriteTrial(store, std::move(stopping), scope);
}

// The trial whose job record the call sets; NotFound if it or its study is
// gone (checked before anything is queued, so nothing is written then).
absl::StatusOr<const Trial*> JobTrial(const StudyState& st,
                                      const api::TrialName& name,
                                      const std::string& trial_name)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (st.deleted) {
    return absl::NotFoundError(
        absl::StrCat("trial ", trial_name, " not found"));
  }
  return st.FindTrial(name.trial_id, trial_name);
}

// Queues the measurements as one write and, right behind them (the same
// group commit), the job record `job` of `job_trial` in `job_study` if set.
// REQUIRES: every study's mutex held.
absl::Status QueueBatch(
    const std::vector<MeasurementStore::MeasurementWrite>& writes,
    const StudyMap& states, StudyState* job_study, const Trial* job_trial,
    const cairn::v1::TrialJob* job, StudyDataStore* store, WriteScope* scope) {
  if (absl::Status s = QueueMeasurements(store, writes, states, scope);
      !s.ok()) {
    return s;
  }
  if (job_study == nullptr) return absl::OkStatus();
  job_study->mu.AssertHeld();
  return job_study->WriteTrial(store, WithJob(*job_trial, *job), scope);
}

using FindStudyFn =
    std::function<absl::StatusOr<std::shared_ptr<StudyState>>(int64_t)>;

// Parses every trial name of the call (reports, then the job's trial) and
// finds each study once with `find`.
absl::StatusOr<ResolvedReports> ResolveReports(
    const std::vector<MeasurementReport>& reports, const std::string* job_trial,
    const FindStudyFn& find) {
  ResolvedReports out;
  auto resolve =
      [&](const std::string& name) -> absl::StatusOr<api::TrialName> {
    absl::StatusOr<api::TrialName> tn = api::ParseTrialName(name, "trial_name");
    if (!tn.ok()) return tn.status();
    if (out.states.count(tn->study_id) == 0) {
      auto state = find(tn->study_id);
      if (!state.ok()) return state.status();
      out.states[tn->study_id] = *state;
    }
    return tn;
  };
  out.names.reserve(reports.size());
  for (const MeasurementReport& report : reports) {
    absl::StatusOr<api::TrialName> tn = resolve(report.trial_name);
    if (!tn.ok()) return tn.status();
    out.names.push_back(*tn);
  }
  if (job_trial != nullptr) {
    absl::StatusOr<api::TrialName> tn = resolve(*job_trial);
    if (!tn.ok()) return tn.status();
    out.job_name = *tn;
  }
  return out;
}

// Validates every report, then queues them (and the job record) as one
// batch and applies them in memory, stopping trials the early-stopping rule
// judges. Returns the number of measurements written. REQUIRES: every
// study's mutex held.
absl::StatusOr<int64_t> WriteMeasurementsLocked(
    const ResolvedReports& resolved,
    const std::vector<MeasurementReport>& reports, const std::string* job_trial,
    const cairn::v1::TrialJob* job, const Deps& deps, WriteScope* scope) {
  absl::StatusOr<std::vector<MeasurementStore::MeasurementWrite>> writes =
      MeasurementWrites(resolved, reports, deps.clock->Now());
  if (!writes.ok()) return writes.status();
  StudyState* job_study = nullptr;
  const Trial* job_trial_now = nullptr;
  if (resolved.job_name.has_value()) {
    job_study = resolved.states.at(resolved.job_name->study_id).get();
    job_study->mu.AssertHeld();
    absl::StatusOr<const Trial*> t =
        JobTrial(*job_study, *resolved.job_name, *job_trial);
    if (!t.ok()) return t.status();
    job_trial_now = *t;
  }
  if (absl::Status s = QueueBatch(*writes, resolved.states, job_study,
                                  job_trial_now, job, deps.store, scope);
      !s.ok()) {
    return s;
  }
  const int64_t written = static_cast<int64_t>(writes->size());
  for (const auto& [study_id, trial_id] :
       ApplyMeasurements(*writes, resolved.states)) {
    StudyState& st = *resolved.states.at(study_id);
    st.mu.AssertHeld();
    if (absl::Status s =
            JudgeTrial(st, trial_id, deps.store, deps.observer, scope);
        !s.ok()) {
      return s;
    }
  }
  return written;
}

}  // namespace

// ---------------------------------------------------------------- measurements

absl::StatusOr<Trial> StudyManager::AddMeasurement(const std::string& name,
                                                   const Measurement& m) {
  absl::StatusOr<int64_t> written = AddMeasurements({{name, m}});
  if (!written.ok()) return written.status();
  return GetTrialBasic(name);
}

absl::StatusOr<int64_t> StudyManager::AddMeasurements(
    const std::vector<MeasurementReport>& reports) {
  return AddMeasurementsImpl(reports, nullptr, nullptr);
}

absl::StatusOr<int64_t> StudyManager::AddMeasurementsWithJob(
    const std::vector<MeasurementReport>& reports, const std::string& job_trial,
    const cairn::v1::TrialJob& job) {
  return AddMeasurementsImpl(reports, &job_trial, &job);
}

absl::StatusOr<int64_t> StudyManager::AddMeasurementsImpl(
    const std::vector<MeasurementReport>& reports, const std::string* job_trial,
    const cairn::v1::TrialJob* job) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  if (reports.empty() && job == nullptr) return 0;
  absl::StatusOr<ResolvedReports> resolved = ResolveReports(
      reports, job_trial, [this](int64_t id) { return FindStudy(id); });
  if (!resolved.ok()) return resolved.status();
  WriteScope scope;
  absl::StatusOr<int64_t> result;
  {
    StudyLocks locks(resolved->states, &scope);
    result = WriteMeasurementsLocked(*resolved, reports, job_trial, job,
                                     Deps{store_, clock_, observer_}, &scope);
  }
  if (absl::Status s = AwaitScope(scope); !s.ok()) return s;
  if (result.ok() && observer_ != nullptr) {
    observer_->OnMeasurementsWritten(*result);
  }
  return result;
}

absl::StatusOr<tuner::StopDecision> StudyManager::CheckEarlyStopping(
    const std::string& trial_name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "trial_name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<tuner::StopDecision> result;
  {
    LockedStudy lock(st, &scope);
    absl::StatusOr<const Trial*> t = st.FindTrial(tn->trial_id, trial_name);
    if (!t.ok()) {
      result = t.status();
    } else if ((*t)->state() == Trial::STOPPING) {
      auto reason = (*t)->metadata().find(api::kEarlyStoppingReasonKey);
      result = tuner::StopDecision{true, reason != (*t)->metadata().end()
                                             ? reason->second
                                             : "trial was asked to stop"};
    } else {
      result = tuner::StopDecision{};
    }
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
