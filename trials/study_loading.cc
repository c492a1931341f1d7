// Lazy recovery of studies: see study_loading.h.
#include "trials/study_loading.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/study_defaults.h"
#include "api/trial_states.h"
#include "spdlog/spdlog.h"
#include "trials/trial_summary.h"
#include "tuner/designer.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using cairn::v1::Trial;

// Puts recovered trial `t` into `state`, with the measurements the state
// keeps in memory (the last one of a pending trial; every one for the curves
// of an early-stopping study).
absl::Status RecoverTrial(StudyDataStore* store, Trial t, StudyState& state)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
  const int64_t id = t.id();
  const bool pending = api::IsPendingState(t.state());
  const bool curves = state.HasEarlyStopping();
  if (pending || curves) {
    absl::StatusOr<std::vector<Measurement>> ms =
        store->ListMeasurements(state.id, id);
    if (!ms.ok()) return ms.status();
    if (!ms->empty() && pending) state.last_measurement[id] = ms->back();
    if (curves) {
      for (const Measurement& m : *ms) state.AddToCurve(id, m);
      state.curves[id].trial_id = id;
      state.curves[id].completed = t.state() == Trial::SUCCEEDED;
    }
  }
  state.trials.Put(std::move(t));
  return absl::OkStatus();
}

// Fills the unloaded `st` from `stored` (its trials and max trial id).
absl::Status Fill(StudyDataStore* store, StoredStudy stored, StudyState& st)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  for (Trial& t : stored.trials) {
    if (absl::Status s = RecoverTrial(store, std::move(t), st); !s.ok()) {
      return s;
    }
  }
  st.max_trial_id = std::max(st.max_trial_id, stored.max_trial_id);
  TrialSummary summary = SummarizeTrials(st.study.spec(), st.trials);
  if (stored.summary.has_value() && !(*stored.summary == summary)) {
    spdlog::warn(
        "study {}: its trial summary record disagreed with its "
        "trials; using the trials",
        st.study.name());
  }
  st.summary = std::move(summary);
  st.loaded = true;
  return absl::OkStatus();
}

}  // namespace

absl::Status EnsureLoaded(StudyDataStore* store, StudyState& st) {
  if (st.loaded || st.deleted) return absl::OkStatus();
  absl::StatusOr<StoredStudy> stored = store->LoadStudy(st.id);
  if (!stored.ok()) return stored.status();
  // A failed fill leaves nothing half loaded.
  if (absl::Status s = Fill(store, std::move(*stored), st); !s.ok()) {
    st.Unload();
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<StudyState>> StudyFromStore(
    StudyDataStore* store, StoredStudy stored,
    const std::function<absl::StatusOr<std::unique_ptr<tuner::Designer>>(
        const cairn::v1::StudySpec&)>& create_designer) {
  auto state = std::make_shared<StudyState>(stored.study_id);
  absl::MutexLock lock(&state->mu);
  state->study = std::move(stored.study);
  // A study stored before its defaults were recorded shows what runs.
  state->study.mutable_spec()->set_algorithm(
      api::EffectiveAlgorithm(state->study.spec().algorithm()));
  state->max_trial_id = stored.max_trial_id;
  absl::StatusOr<std::unique_ptr<tuner::Designer>> designer =
      create_designer(state->study.spec());
  if (!designer.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "recovering ", state->study.name(), ": ", designer.status().message()));
  }
  state->designer = std::move(*designer);
  if (stored.summary.has_value()) {
    state->summary = std::move(*stored.summary);
    return state;
  }
  if (absl::Status s = EnsureLoaded(store, *state); !s.ok()) return s;
  return state;
}

}  // namespace cairn
