// A study's in-memory state and its lock: see study_state.h.
#include "trials/study_state.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/trial_states.h"
#include "spdlog/spdlog.h"
#include "trials/failure_policy.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

absl::Status Queued(absl::StatusOr<std::shared_ptr<PendingWrite>> write,
                    std::shared_ptr<PendingWrite>* last_write,
                    WriteScope* scope) {
  if (!write.ok()) return write.status();
  if (*write != nullptr) {
    *last_write = std::move(*write);
    scope->wrote = true;
  }
  return absl::OkStatus();
}

bool StudyState::HasEarlyStopping() const {
  return study.spec().early_stopping().rule_case() !=
             cairn::v1::EarlyStoppingConfig::RULE_NOT_SET &&
         study.spec().metrics_size() > 0;
}

void StudyState::AddToCurve(int64_t trial_id, const Measurement& m) {
  const std::string& objective = study.spec().metrics(0).metric_id();
  for (const auto& metric : m.metrics()) {
    if (metric.metric_id() != objective) continue;
    tuner::Curve& c = curves[trial_id];
    c.trial_id = trial_id;
    c.points.emplace_back(m.step_count(), metric.value());
  }
}

void StudyState::CompleteCurve(int64_t trial_id) {
  tuner::Curve& c = curves[trial_id];
  c.trial_id = trial_id;
  c.completed = true;
}

Study StudyState::View() const {
  Study out = study;
  out.set_trial_count(static_cast<int32_t>(summary.total()));
  out.set_pending_count(static_cast<int32_t>(summary.pending()));
  out.set_succeeded_count(
      static_cast<int32_t>(summary.count(Trial::SUCCEEDED)));
  out.set_failed_count(static_cast<int32_t>(summary.count(Trial::FAILED)));
  out.set_infeasible_count(
      static_cast<int32_t>(summary.count(Trial::INFEASIBLE)));
  out.set_cancelled_count(
      static_cast<int32_t>(summary.count(Trial::CANCELLED)));
  return out;
}

void StudyState::Unload() {
  trials = TrialTable();
  last_measurement.clear();
  curves.clear();
  loaded = false;
}

absl::StatusOr<const Trial*> StudyState::FindTrial(
    int64_t trial_id, absl::string_view name) const {
  auto it = trials.find(trial_id);
  if (it == trials.end()) {
    return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
  }
  return &it->second;
}

absl::StatusOr<const Trial*> StudyState::FindPendingTrial(
    int64_t trial_id, absl::string_view name) const {
  absl::StatusOr<const Trial*> trial = FindTrial(trial_id, name);
  if (!trial.ok() || api::IsPendingState((*trial)->state())) return trial;
  return absl::FailedPreconditionError(absl::StrCat(
      "trial ", name, " is already ", Trial::State_Name((*trial)->state())));
}

void StudyState::ReplaceContents(StudyState& from) {
  study = std::move(from.study);
  loaded = from.loaded;
  summary = std::move(from.summary);
  trials = std::move(from.trials);
  max_trial_id = from.max_trial_id;
  designer = std::move(from.designer);
  last_measurement = std::move(from.last_measurement);
  curves = std::move(from.curves);
  exhausted = from.exhausted;
  last_write = nullptr;
}

absl::Status StudyState::WriteTrial(StudyStore* store, Trial trial,
                                    WriteScope* scope) {
  std::vector<Trial> batch = {std::move(trial)};
  TrialSummary after = SummaryAfterPut(study.spec(), trials, summary, batch);
  if (absl::Status s = Queued(
          Timed(&scope->times.append,
                [&] { return store->EnqueuePutTrials(id, batch, &after); }),
          &last_write, scope);
      !s.ok()) {
    return s;
  }
  trials.Put(std::move(batch.front()));
  summary = std::move(after);
  return absl::OkStatus();
}

Trial WithJob(Trial t, const cairn::v1::TrialJob& job) {
  const bool stop_asked = !api::IsPendingState(t.state()) &&
                          t.job().state() == cairn::v1::TrialJob::STOPPING &&
                          job.state() == cairn::v1::TrialJob::RUNNING;
  if (!stop_asked) {
    *t.mutable_job() = job;
    return t;
  }
  std::string why = t.job().message();
  *t.mutable_job() = job;
  t.mutable_job()->set_state(cairn::v1::TrialJob::STOPPING);
  t.mutable_job()->set_message(std::move(why));
  return t;
}

absl::Status StudyState::StopLiveJob(StudyStore* store, const Trial& t,
                                     const std::string& why,
                                     WriteScope* scope) {
  if (!api::HasLiveJob(t) || t.job().state() == cairn::v1::TrialJob::STOPPING) {
    return absl::OkStatus();
  }
  Trial stopping = t;
  stopping.mutable_job()->set_state(cairn::v1::TrialJob::STOPPING);
  stopping.mutable_job()->set_message(why);
  return WriteTrial(store, std::move(stopping), scope);
}

bool StudyState::NextState(Study::State* state, std::string* reason) const {
  if (study.state() != Study::ACTIVE) return false;
  const StudySpec& spec = study.spec();
  if (FailureLimitReached(spec, trials, reason)) {
    *state = Study::FAILED;
    return true;
  }
  if (CountPending() > 0) return false;
  if (spec.max_trials() > 0 &&
      static_cast<int64_t>(trials.size()) >= spec.max_trials()) {
    *state = Study::COMPLETED;
    *reason = absl::StrCat("max_trials (", spec.max_trials(), ") reached");
    return true;
  }
  if (exhausted) {
    *state = Study::COMPLETED;
    *reason = "search space exhausted";
    return true;
  }
  return false;
}

absl::Status StudyState::AdvanceState(StudyStore* store, WriteScope* scope) {
  Study::State next;
  std::string reason;
  if (!NextState(&next, &reason)) return absl::OkStatus();
  Study updated = study;
  updated.set_state(next);
  updated.set_inactive_reason(reason);
  if (absl::Status s =
          Queued(store->EnqueueUpdateStudy(id, updated), &last_write, scope);
      !s.ok()) {
    return s;
  }
  study = std::move(updated);
  if (next == Study::FAILED) {
    spdlog::warn("study {} ({}) FAILED: {}", study.name(), study.display_name(),
                 reason);
  }
  return absl::OkStatus();
}

void StudyState::AwaitNoDeletion() {
  auto settled = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !deleting; };
  mu.Await(absl::Condition(&settled));
}

LockedStudy::LockedStudy(StudyState& study, WriteScope* scope)
    : study_(study), scope_(scope) {
  const auto start = std::chrono::steady_clock::now();
  study_.mu.Lock();
  study_.AwaitNoDeletion();
  scope_->times.lock_wait +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

LockedStudy::~LockedStudy() {
  study_.mu.AssertHeld();
  if (study_.last_write != nullptr)
    scope_->pending.push_back(study_.last_write);
  study_.mu.Unlock();
}

}  // namespace cairn
