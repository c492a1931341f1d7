// Study controller: suggestions and the trial lifecycle (create, read, list,
// delete; completion is in study_manager_complete.cc). See study_manager.h
// for the contract.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "api/resource_names.h"
#include "trials/optimal.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "tuner/designer.h"
#include "tuner/spec_validation.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::CheckPageSize;
using study_manager_internal::Deps;
using study_manager_internal::Finish;
using study_manager_internal::ParsePageToken;
using study_manager_internal::WriteTimer;

namespace {

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
  t.set_name(api::TrialResourceName(st.id, t.id()));
  *t.mutable_parameters() = request.parameters();
  *t.mutable_labels() = request.labels();
  t.set_client_id(request.client_id());
  *t.mutable_start_time() = util::ToProtoTimestamp(now);
  if (request.has_final_measurement()) {
    t.set_state(Trial::SUCCEEDED);
    *t.mutable_final_measurement() = request.final_measurement();
    *t.mutable_end_time() = util::ToProtoTimestamp(now);
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
    deps.observer->OnTrialFinished({st.study.name(), st.study.display_name()},
                                   "succeeded");
  }
  return t;
}

// Attaches to `t` the last kMaxTrialMeasurements of its measurements in the
// store, in report order; measurements_truncated set where there are more.
absl::Status AttachMeasurements(MeasurementStore* store, int64_t study_id,
                                Trial& t) {
  std::vector<Measurement> newest_first;
  absl::Status s = store->ScanMeasurements(
      study_id, t.id(), {INT64_MAX, true}, [&](int64_t, const Measurement& m) {
        if (newest_first.size() == cairn::api::kMaxTrialMeasurements) {
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
  return absl::OkStatus();
}

// Cuts `page` to its longest prefix (at least one trial) whose trials,
// measurements attached when `include_measurements`, fit in
// kMaxListTrialsBytes; a cut page's next_page_token resumes after its last
// trial.
absl::Status FitPage(MeasurementStore* store, int64_t study_id,
                     bool include_measurements, TrialPage& page) {
  size_t bytes = 0;
  for (size_t i = 0; i < page.trials.size(); ++i) {
    Trial& t = page.trials[i];
    if (include_measurements) {
      if (absl::Status s = AttachMeasurements(store, study_id, t); !s.ok()) {
        return s;
      }
    }
    // Field tag and length prefix of the repeated entry included.
    bytes += t.ByteSizeLong() + 8;
    if (i > 0 && bytes > static_cast<size_t>(cairn::api::kMaxListTrialsBytes)) {
      page.trials.resize(i);
      page.next_page_token = absl::StrCat(page.trials.back().id());
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- trials

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
  absl::StatusOr<api::TrialName> tn = api::ParseTrialName(name, "name");
  if (!tn.ok()) return tn.status();
  if (absl::Status s = AttachMeasurements(store_, tn->study_id, *out);
      !s.ok()) {
    return s;
  }
  return out;
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
  if (absl::Status s = FitPage(store_, st.id, include_measurements, page);
      !s.ok()) {
    return s;
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
  st.AwaitNoDeletion();
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
