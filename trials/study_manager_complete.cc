// Study controller: completing and stopping trials (the end of the trial
// lifecycle). See study_manager.h for the contract.
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/trial_states.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "tuner/spec_validation.h"
#include "util/quote.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::Deps;
using study_manager_internal::Finish;

namespace {

// The job message of an ended trial's job stopped by StopTrial.
constexpr char kStopAfterEnd[] = "stop requested after the trial ended";

// `final_m` is a valid final measurement of the spec's metrics and no other.
absl::Status ValidateGivenFinal(const StudySpec& spec,
                                const Measurement& final_m) {
  if (absl::Status s = tuner::ValidateFinalMeasurement(spec, final_m);
      !s.ok()) {
    return s;
  }
  for (const auto& metric : final_m.metrics()) {
    bool known = false;
    for (const auto& ms : spec.metrics()) {
      known = known || ms.metric_id() == metric.metric_id();
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("final_measurement.metrics: metric ",
                       util::QuoteForError(metric.metric_id()),
                       " is not in the study spec"));
    }
  }
  return absl::OkStatus();
}

// The final measurement of trial `t`: `final_m` if given, else its last
// reported one (which must be a valid final measurement).
absl::StatusOr<Measurement> FinalMeasurement(
    const StudyState& st, const Trial& t, const std::string& name,
    const std::optional<Measurement>& final_m)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const StudySpec& spec = st.study.spec();
  if (final_m.has_value()) {
    if (absl::Status s = ValidateGivenFinal(spec, *final_m); !s.ok()) return s;
    return *final_m;
  }
  auto last = st.last_measurement.find(t.id());
  // A study without parameters runs one program (an AI Platform training
  // job without hyperparameters): it succeeds without a metric.
  // Its reports may track any metric.
  if (spec.parameters_size() == 0 &&
      (last == st.last_measurement.end() ||
       !tuner::ValidateFinalMeasurement(spec, last->second).ok())) {
    return Measurement();
  }
  if (last == st.last_measurement.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", name,
                     " has no measurement: give a final measurement or mark it "
                     "infeasible"));
  }
  if (absl::Status s = tuner::ValidateFinalMeasurement(spec, last->second);
      !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the last measurement of trial ", name,
                     " cannot be final: ", s.message()));
  }
  return last->second;
}

// Records the completed trial `t` in memory and in the store, and reports
// `outcome`; the study may then complete.
absl::Status ApplyCompletion(StudyState& st, Trial t,
                             const std::string& outcome, const Deps& deps,
                             WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const int64_t id = t.id();
  const bool succeeded = t.state() == Trial::SUCCEEDED;
  if (absl::Status s = st.WriteTrial(deps.store, std::move(t), scope);
      !s.ok()) {
    return s;
  }
  st.last_measurement.erase(id);
  if (st.HasEarlyStopping() && succeeded) st.CompleteCurve(id);
  if (deps.observer != nullptr) {
    deps.observer->OnTrialFinished({st.study.name(), st.study.display_name()},
                                   outcome);
  }
  return st.AdvanceState(deps.store, scope);
}

// CompleteTrial under the study's lock.
absl::StatusOr<Trial> CompleteLocked(StudyState& st, int64_t trial_id,
                                     const std::string& name,
                                     const std::optional<Measurement>& final_m,
                                     bool infeasible,
                                     const std::string& infeasible_reason,
                                     const Deps& deps, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  absl::StatusOr<const Trial*> found = st.FindPendingTrial(trial_id, name);
  if (!found.ok()) return found.status();
  Trial t = **found;
  std::string outcome;
  if (infeasible) {
    t.set_state(Trial::INFEASIBLE);
    t.set_infeasible_reason(infeasible_reason.empty() ? "infeasible"
                                                      : infeasible_reason);
    outcome = "infeasible";
  } else {
    absl::StatusOr<Measurement> final_measurement =
        FinalMeasurement(st, t, name, final_m);
    if (!final_measurement.ok()) return final_measurement.status();
    const bool stopped_early = t.state() == Trial::STOPPING;
    t.set_state(Trial::SUCCEEDED);
    *t.mutable_final_measurement() = std::move(*final_measurement);
    t.set_stopped_early(stopped_early);
    outcome = stopped_early ? "stopped_early" : "succeeded";
  }
  *t.mutable_end_time() = util::ToProtoTimestamp(deps.clock->Now());
  if (absl::Status s = ApplyCompletion(st, t, outcome, deps, scope); !s.ok()) {
    return s;
  }
  return t;
}

// StopTrial under the study's lock.
absl::StatusOr<Trial> StopLocked(StudyState& st, int64_t trial_id,
                                 const std::string& name, StudyDataStore* store,
                                 WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  absl::StatusOr<const Trial*> found = st.FindTrial(trial_id, name);
  if (!found.ok()) return found.status();
  if (!api::IsPendingState((*found)->state())) {
    // Ended, but its job may still run: that job is what stops now.
    if (!api::HasLiveJob(**found)) {
      return st.FindPendingTrial(trial_id, name).status();
    }
    const Trial ended = **found;
    if (absl::Status s = st.StopLiveJob(store, ended, kStopAfterEnd, scope);
        !s.ok()) {
      return s;
    }
    return st.trials.find(ended.id())->second;
  }
  if ((*found)->state() == Trial::STOPPING) return **found;
  Trial t = **found;
  t.set_state(Trial::STOPPING);
  if (absl::Status s = st.WriteTrial(store, t, scope); !s.ok()) return s;
  return t;
}

}  // namespace

absl::StatusOr<Trial> StudyManager::CompleteTrial(
    const std::string& name, const std::optional<Measurement>& final_m,
    bool infeasible, const std::string& infeasible_reason) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result;
  {
    LockedStudy lock(st, &scope);
    result = CompleteLocked(st, tn->trial_id, name, final_m, infeasible,
                            infeasible_reason, Deps{store_, clock_, observer_},
                            &scope);
  }
  return Finish(AwaitAndReport("CompleteTrial", scope, /*designs=*/false),
                std::move(result));
}

absl::StatusOr<Trial> StudyManager::StopTrial(const std::string& name) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result;
  {
    LockedStudy lock(st, &scope);
    result = StopLocked(st, tn->trial_id, name, store_, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
