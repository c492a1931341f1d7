// Study controller: suggestions and the trial lifecycle (create, read, list,
// delete; completion is in study_manager_complete.cc). See study_manager.h
// for the contract.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/cairn/v1/limits.h"
#include "proto/cairn/v1/resource_names.h"
#include "trials/optimal.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "tuner/designer.h"
#include "tuner/spec_validation.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::CheckPageSize;
using study_manager_internal::Deps;
using study_manager_internal::Finish;
using study_manager_internal::ParsePageToken;
using study_manager_internal::SetTimestamp;
using study_manager_internal::WriteTimer;

namespace {

// ------------------------------------------------------- SuggestTrials steps

// Vizier: a client asking again gets its pending trials back. Fills `result`
// and returns true if `client_id` has pending trials.
bool ClientPendingTrials(const StudyState& st, const std::string& client_id,
                         SuggestResult* result)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (client_id.empty()) return false;
  for (const Trial* t : st.trials.PendingOf(client_id)) {
    result->trials.push_back(*t);
  }
  if (result->trials.empty()) return false;
  result->study_state = st.study.state();
  result->message =
      absl::StrCat("returning the ", result->trials.size(),
                   " pending trial(s) of client '", client_id, "'");
  return true;
}

// How many of `count` trials max_trials and max_parallel_trials allow; sets
// `*message` to the limit that cut the count, if one did.
int64_t AllowedTrials(const StudyState& st, int count, std::string* message)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const StudySpec& spec = st.study.spec();
  int64_t n = count;
  const int64_t pending = st.CountPending();
  if (spec.max_trials() > 0) {
    const int64_t left =
        spec.max_trials() - static_cast<int64_t>(st.trials.size());
    if (left < n) {
      n = std::max<int64_t>(left, 0);
      *message = absl::StrCat("max_trials (", spec.max_trials(), ") reached; ",
                              pending, " trial(s) still pending");
    }
  }
  if (spec.max_parallel_trials() > 0) {
    const int64_t room = spec.max_parallel_trials() - pending;
    if (room < n) {
      n = std::max<int64_t>(room, 0);
      *message =
          absl::StrCat("max_parallel_trials (", spec.max_parallel_trials(),
                       ") trials are pending");
    }
  }
  return n;
}

// Asks the designer for `n` suggestions, timing it into `*seconds` and
// reporting it to `observer` (may be null).
absl::StatusOr<std::vector<tuner::Suggestion>> RunDesigner(
    const StudyState& st, int64_t n, StudyObserver* observer, double* seconds)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const StudySpec& spec = st.study.spec();
  tuner::DesignerContext context;
  context.spec = &spec;
  context.trials = st.trials.InIdOrder();
  context.pending = st.trials.Pending();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      st.designer->Suggest(context, static_cast<int>(n));
  *seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!suggestions.ok()) return suggestions.status();
  if (observer != nullptr) {
    observer->OnSuggest(StudySpec::Algorithm_Name(spec.algorithm()), *seconds,
                        static_cast<int>(suggestions->size()));
  }
  return suggestions;
}

// The ACTIVE trials of `suggestions`, numbered after st.max_trial_id.
std::vector<Trial> SuggestedTrials(const StudyState& st,
                                   std::vector<tuner::Suggestion>& suggestions,
                                   const std::string& client_id, absl::Time now,
                                   double seconds)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  std::vector<Trial> created;
  int64_t next_id = st.max_trial_id;
  for (tuner::Suggestion& s : suggestions) {
    Trial t;
    t.set_id(++next_id);
    t.set_name(TrialResourceName(st.id, t.id()));
    t.set_state(Trial::ACTIVE);
    t.set_client_id(client_id);
    for (auto& p : s.parameters) *t.add_parameters() = std::move(p);
    SetTimestamp(now, t.mutable_start_time());
    for (const auto& [k, v] : s.metadata) (*t.mutable_metadata())[k] = v;
    if (t.metadata().count("suggestion_seconds") == 0) {
      (*t.mutable_metadata())["suggestion_seconds"] =
          absl::StrCat(seconds / std::max<size_t>(1, suggestions.size()));
    }
    created.push_back(std::move(t));
  }
  return created;
}

// The last step of a suggestion: advances the study's state and says why
// fewer trials than asked came back.
absl::StatusOr<SuggestResult> FinishSuggest(StudyState& st, Store* store,
                                            WriteScope* scope,
                                            SuggestResult result,
                                            std::string message)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (absl::Status s = st.AdvanceState(store, scope); !s.ok()) return s;
  result.study_state = st.study.state();
  if (result.trials.empty() && st.study.state() != Study::ACTIVE) {
    message = absl::StrCat("study is ", Study::State_Name(st.study.state()),
                           st.study.inactive_reason().empty() ? "" : ": ",
                           st.study.inactive_reason());
  }
  result.message = std::move(message);
  return result;
}

// SuggestTrials under the study's lock.
absl::StatusOr<SuggestResult> SuggestLocked(StudyState& st, int count,
                                            const std::string& client_id,
                                            const Deps& deps, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  SuggestResult result;
  if (ClientPendingTrials(st, client_id, &result)) return result;
  if (st.study.state() != Study::ACTIVE) {
    return FinishSuggest(st, deps.store, scope, std::move(result), "");
  }
  std::string message;
  const int64_t n = AllowedTrials(st, count, &message);
  if (n == 0) {
    return FinishSuggest(st, deps.store, scope, std::move(result), message);
  }
  if (!deps.new_trials.ok()) return deps.new_trials;
  double seconds = 0;
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      RunDesigner(st, n, deps.observer, &seconds);
  if (!suggestions.ok()) return suggestions.status();
  if (static_cast<int64_t>(suggestions->size()) < n) {
    st.exhausted = true;
    message = "search space exhausted";
  }
  std::vector<Trial> created =
      SuggestedTrials(st, *suggestions, client_id, deps.clock->Now(), seconds);
  TrialSummary after =
      SummaryAfterPut(st.study.spec(), st.trials, st.summary, created);
  if (absl::Status s =
          Queued(deps.store->EnqueuePutTrials(st.id, created, &after),
                 &st.last_write, scope);
      !s.ok()) {
    return s;
  }
  if (!created.empty()) st.max_trial_id = created.back().id();
  for (Trial& t : created) {
    result.trials.push_back(t);
    st.trials.Put(std::move(t));
  }
  st.summary = std::move(after);
  return FinishSuggest(st, deps.store, scope, std::move(result), message);
}

// -------------------------------------------------------- CreateTrial steps

// FailedPrecondition or ResourceExhausted when the study takes no new trial.
absl::Status CheckRoomForTrial(const StudyState& st, const std::string& parent)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const StudySpec& spec = st.study.spec();
  if (st.study.state() == Study::COMPLETED ||
      st.study.state() == Study::FAILED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "study ", parent, " is ", Study::State_Name(st.study.state()),
        "; no trials can be added"));
  }
  if (spec.max_trials() > 0 &&
      static_cast<int64_t>(st.trials.size()) >= spec.max_trials()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "study ", parent, ": max_trials (", spec.max_trials(), ") reached"));
  }
  return absl::OkStatus();
}

// The parameters, and the final measurement if given, fit the spec.
absl::Status ValidateManualTrial(const StudySpec& spec, const Trial& request) {
  std::vector<cairn::v1::Parameter> params(request.parameters().begin(),
                                           request.parameters().end());
  if (absl::Status s = tuner::ValidateTrialParameters(spec, params); !s.ok()) {
    return s;
  }
  if (!request.has_final_measurement()) return absl::OkStatus();
  return tuner::ValidateFinalMeasurement(spec, request.final_measurement());
}

// The new trial of `request`: ACTIVE, or SUCCEEDED with a final measurement.
Trial ManualTrial(const StudyState& st, const Trial& request, absl::Time now)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  Trial t;
  t.set_id(st.max_trial_id + 1);
  t.set_name(TrialResourceName(st.id, t.id()));
  *t.mutable_parameters() = request.parameters();
  *t.mutable_labels() = request.labels();
  t.set_client_id(request.client_id());
  SetTimestamp(now, t.mutable_start_time());
  if (request.has_final_measurement()) {
    t.set_state(Trial::SUCCEEDED);
    *t.mutable_final_measurement() = request.final_measurement();
    SetTimestamp(now, t.mutable_end_time());
  } else {
    t.set_state(Trial::ACTIVE);
  }
  return t;
}

// CreateTrial under the study's lock.
absl::StatusOr<Trial> CreateTrialLocked(StudyState& st,
                                        const std::string& parent,
                                        const Trial& request, const Deps& deps,
                                        WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (absl::Status s = ValidateManualTrial(st.study.spec(), request); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRoomForTrial(st, parent); !s.ok()) return s;
  Trial t = ManualTrial(st, request, deps.clock->Now());
  if (absl::Status s = st.WriteTrial(deps.store, t, scope); !s.ok()) return s;
  st.max_trial_id = t.id();
  if (request.has_final_measurement() && deps.observer != nullptr) {
    deps.observer->OnTrialFinished(st.study.name(), "succeeded");
  }
  return t;
}

// The last kMaxTrialMeasurements of the store's measurements of every trial
// in `trials`, attached to each in report order; measurements_truncated set
// where there are more.
absl::Status AttachMeasurements(Store* store, int64_t study_id,
                                std::vector<Trial>& trials) {
  for (Trial& t : trials) {
    std::vector<Measurement> newest_first;
    absl::Status s = store->ScanMeasurements(
        study_id, t.id(), {INT64_MAX, true},
        [&](int64_t, const Measurement& m) {
          if (newest_first.size() == cairn::v1::kMaxTrialMeasurements) {
            t.set_measurements_truncated(true);
            return false;
          }
          newest_first.push_back(m);
          return true;
        });
    if (!s.ok()) return s;
    for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) {
      *t.add_measurements() = std::move(*it);
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- trials

absl::StatusOr<SuggestResult> StudyManager::SuggestTrials(
    const std::string& parent, int count, const std::string& client_id) {
  if (count < 1 || count > cairn::v1::kMaxSuggestionCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("suggestion_count: ", count, " must be between 1 and ",
                     cairn::v1::kMaxSuggestionCount));
  }
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  const absl::Status reserve = CheckReserve();
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<SuggestResult> result;
  {
    LockedStudy lock(st, &scope);
    result = SuggestLocked(st, count, client_id,
                           Deps{store_, clock_, observer_, reserve}, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

absl::StatusOr<Trial> StudyManager::CreateTrial(const std::string& parent,
                                                const Trial& request) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  if (absl::Status s = CheckReserve(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<Trial> result;
  {
    LockedStudy lock(st, &scope);
    result = CreateTrialLocked(st, parent, request,
                               Deps{store_, clock_, observer_}, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

absl::StatusOr<Trial> StudyManager::GetTrial(const std::string& name) {
  absl::StatusOr<Trial> out = GetTrialBasic(name);
  if (!out.ok()) return out.status();
  // GetTrialBasic returned once everything queued so far was durable, so the
  // list includes every measurement already acknowledged.
  std::vector<Trial> one = {std::move(*out)};
  absl::StatusOr<TrialName> tn = ParseTrialName(name, "name");
  if (!tn.ok()) return tn.status();
  if (absl::Status s = AttachMeasurements(store_, tn->study_id, one); !s.ok()) {
    return s;
  }
  return std::move(one[0]);
}

absl::StatusOr<TrialPage> StudyManager::ListTrials(
    const std::string& parent, int page_size, const std::string& page_token,
    bool include_measurements) {
  if (absl::Status s = CheckPageSize(page_size); !s.ok()) return s;
  if (page_size == 0) page_size = 1000;
  absl::StatusOr<int64_t> after = ParsePageToken(page_token);
  if (!after.ok()) return after.status();
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  TrialPage page;
  {
    LockedStudy lock(st, &scope);
    for (auto it = st.trials.upper_bound(*after); it != st.trials.end(); ++it) {
      if (static_cast<int>(page.trials.size()) == page_size) {
        page.next_page_token = absl::StrCat(page.trials.back().id());
        break;
      }
      page.trials.push_back(it->second);
    }
  }
  if (absl::Status s = AwaitScope(scope); !s.ok()) return s;
  if (include_measurements) {
    if (absl::Status s = AttachMeasurements(store_, st.id, page.trials);
        !s.ok()) {
      return s;
    }
  }
  return page;
}

absl::Status StudyManager::DeleteTrial(const std::string& name) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  // Synchronous: Store::DeleteTrial drains the commit queue itself.
  absl::MutexLock lock(&st.mu);
  if (!st.trials.contains(tn->trial_id)) {
    return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
  }
  TrialSummary after =
      SummaryAfterErase(st.study.spec(), st.trials, st.summary, tn->trial_id);
  {
    WriteTimer timer(observer_);
    if (absl::Status s = store_->DeleteTrial(st.id, tn->trial_id, &after);
        !s.ok()) {
      return s;
    }
  }
  st.trials.Erase(tn->trial_id);
  st.summary = std::move(after);
  st.last_measurement.erase(tn->trial_id);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Trial>> StudyManager::ListOptimalTrials(
    const std::string& parent) {
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  std::vector<Trial> out;
  {
    LockedStudy lock(st, &scope);
    const std::vector<const Trial*>& all = st.trials.InIdOrder();
    for (size_t i : OptimalTrialIndices(st.study.spec(), all)) {
      out.push_back(*all[i]);
    }
  }
  return Finish<absl::StatusOr<std::vector<Trial>>>(AwaitScope(scope),
                                                    std::move(out));
}

absl::StatusOr<Trial> StudyManager::GetTrialBasic(const std::string& name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result;
  {
    LockedStudy lock(st, &scope);
    absl::StatusOr<const Trial*> found = st.FindTrial(tn->trial_id, name);
    if (found.ok()) {
      result = **found;
    } else {
      result = found.status();
    }
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
