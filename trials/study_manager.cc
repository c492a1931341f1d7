// Study controller implementation. See study_manager.h for the contract.
#include "trials/study_manager.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "proto/cairn/v1/limits.h"
#include "trials/optimal.h"
#include "trials/resource_names.h"
#include "trials/trial_table.h"
#include "tuner/designer.h"
#include "tuner/early_stopping.h"
#include "tuner/spec_validation.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

bool IsPending(Trial::State state) { return IsPendingState(state); }

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::StatusOr<int64_t> ParsePageToken(const std::string& token) {
  if (token.empty()) return 0;
  int64_t after = 0;
  if (!absl::SimpleAtoi(token, &after) || after < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_token: '", token, "' is not a valid page token"));
  }
  return after;
}

// FailedPrecondition unless the trial is REQUESTED, ACTIVE or STOPPING.
absl::Status CheckPending(const Trial& trial, const std::string& name) {
  if (IsPending(trial.state())) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "trial ", name, " is already ", Trial::State_Name(trial.state())));
}

std::string AlgorithmName(StudySpec::Algorithm algorithm) {
  return StudySpec::Algorithm_Name(algorithm);
}

// Times a store write for the observer.
class WriteTimer {
 public:
  explicit WriteTimer(StudyObserver* observer)
      : observer_(observer), start_(std::chrono::steady_clock::now()) {}
  ~WriteTimer() {
    if (observer_ == nullptr) return;
    observer_->OnStoreWrite(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count());
  }

 private:
  StudyObserver* observer_;
  std::chrono::steady_clock::time_point start_;
};

// The store writes of one call. `pending` collects, for each study the call
// locked, the study's latest queued write at the moment the lock was released
// (awaited before the call returns, so that nothing the call returns rests on
// a write that is not durable yet); `wrote` says the call queued a write
// itself (then the wait is reported to the observer as a store write).
struct WriteScope {
  std::vector<std::shared_ptr<PendingWrite>> pending;
  bool wrote = false;
};

// Holds a study's mutex; on release, records the study's latest queued write
// (`*last_write`, guarded by that mutex) in `scope`.
class ABSL_SCOPED_LOCKABLE StudyLock {
 public:
  StudyLock(absl::Mutex* mu, const std::shared_ptr<PendingWrite>* last_write,
            WriteScope* scope) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu), last_write_(last_write), scope_(scope) {
    mu_->Lock();
  }
  ~StudyLock() ABSL_UNLOCK_FUNCTION() {
    if (*last_write_ != nullptr) scope_->pending.push_back(*last_write_);
    mu_->Unlock();
  }
  StudyLock(const StudyLock&) = delete;
  StudyLock& operator=(const StudyLock&) = delete;

 private:
  absl::Mutex* const mu_;
  const std::shared_ptr<PendingWrite>* const last_write_;
  WriteScope* const scope_;
};

// Records a write just queued for a study (call under the study's mutex, in
// the same critical section that changes its in-memory state).
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

// `result`, unless awaiting the call's writes failed.
template <typename T>
T Finish(const absl::Status& awaited, T result) {
  if (!awaited.ok()) return awaited;
  return result;
}

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

struct StudyManager::StudyState {
  explicit StudyState(int64_t study_id) : id(study_id) {}

  const int64_t id;
  absl::Mutex mu;
  // State below is protected by mu.
  Study study ABSL_GUARDED_BY(mu);
  TrialTable trials ABSL_GUARDED_BY(mu);
  int64_t max_trial_id ABSL_GUARDED_BY(mu) = 0;
  std::unique_ptr<tuner::Designer> designer ABSL_GUARDED_BY(mu);
  // Latest measurement of each pending trial (the default final one).
  std::map<int64_t, Measurement> last_measurement ABSL_GUARDED_BY(mu);
  // Objective curves of every trial, kept only for studies with an
  // early-stopping rule (the rules compare a trial with all others).
  std::map<int64_t, tuner::Curve> curves ABSL_GUARDED_BY(mu);
  // The designer returned nothing: the search space is exhausted.
  bool exhausted ABSL_GUARDED_BY(mu) = false;
  // Set once the study is deleted; late callers holding a pointer see it.
  bool deleted ABSL_GUARDED_BY(mu) = false;
  // The latest store write queued for this study (null if none yet). Writes
  // are queued under mu, so queue order equals the order of in-memory
  // changes; awaiting this one (the queue is ordered) makes every change
  // made so far durable.
  std::shared_ptr<PendingWrite> last_write ABSL_GUARDED_BY(mu);

  bool HasEarlyStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return study.spec().early_stopping().rule_case() !=
               cairn::v1::EarlyStoppingConfig::RULE_NOT_SET &&
           study.spec().metrics_size() > 0;
  }

  // Adds the objective value of `m` (if reported) to the trial's curve.
  void AddToCurve(int64_t trial_id, const Measurement& m)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const std::string& objective = study.spec().metrics(0).metric_id();
    for (const auto& metric : m.metrics()) {
      if (metric.metric_id() != objective) continue;
      tuner::Curve& c = curves[trial_id];
      c.trial_id = trial_id;
      c.points.emplace_back(m.step_count(), metric.value());
    }
  }

  int64_t CountPending() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return trials.pending();
  }

  // The study with output-only counts filled in.
  Study View() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Study out = study;
    out.set_trial_count(static_cast<int32_t>(trials.size()));
    out.set_pending_count(static_cast<int32_t>(trials.pending()));
    out.set_succeeded_count(
        static_cast<int32_t>(trials.count(Trial::SUCCEEDED)));
    out.set_failed_count(static_cast<int32_t>(trials.count(Trial::FAILED) +
                                              trials.count(Trial::INFEASIBLE)));
    return out;
  }

  // The state the study should move to given its trials, if it changes:
  // FAILED at max_failed_trials, COMPLETED when the budget is spent (or the
  // space exhausted) and nothing is pending.
  bool NextState(Study::State* state, std::string* reason) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (study.state() != Study::ACTIVE) return false;
    const StudySpec& spec = study.spec();
    const int64_t failed = trials.count(Trial::FAILED);
    if (spec.max_failed_trials() > 0 && failed >= spec.max_failed_trials()) {
      *state = Study::FAILED;
      *reason = absl::StrCat("max_failed_trials (", spec.max_failed_trials(),
                             ") reached");
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
  // Moves the study to the state NextState() gives, if it changes, queueing
  // the write in `scope`. REQUIRES: mu held.
  absl::Status AdvanceState(Store* store, WriteScope* scope)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
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
    return absl::OkStatus();
  }
};

StudyManager::StudyManager(Store* store, const StudyManagerOptions& options)
    : store_(store),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      observer_(options.observer),
      validate_spec_(options.validate_spec) {}

StudyManager::~StudyManager() = default;

absl::Status StudyManager::CheckHealthy() const {
  absl::MutexLock lock(&failed_mu_);
  return failed_;
}

absl::Status StudyManager::AwaitWrites(
    const std::vector<std::shared_ptr<PendingWrite>>& writes, bool timed) {
  absl::Status status;
  {
    std::optional<WriteTimer> timer;
    if (timed) timer.emplace(observer_);
    for (const auto& w : writes) {
      status = store_->Await(w);
      if (!status.ok()) break;
    }
  }
  if (status.ok()) return status;
  // The in-memory state is now ahead of the disk: refuse everything.
  absl::MutexLock lock(&failed_mu_);
  if (failed_.ok()) {
    failed_ = absl::UnavailableError(
        absl::StrCat(absl::StartsWith(status.message(), "store write failed")
                         ? ""
                         : "store write failed: ",
                     status.message(), "; restart cairnd"));
  }
  return failed_;
}

absl::StatusOr<std::unique_ptr<StudyManager>> StudyManager::Open(
    Store* store, const StudyManagerOptions& options) {
  std::unique_ptr<StudyManager> manager(new StudyManager(store, options));
  absl::StatusOr<std::vector<StoredStudy>> loaded = store->LoadAll();
  if (!loaded.ok()) return loaded.status();
  absl::MutexLock lock(&manager->mu_);
  for (StoredStudy& stored : *loaded) {
    auto state = std::make_shared<StudyState>(stored.study_id);
    absl::MutexLock study_lock(&state->mu);
    state->study = std::move(stored.study);
    state->max_trial_id = stored.max_trial_id;
    const bool curves = state->HasEarlyStopping();
    for (Trial& t : stored.trials) {
      const int64_t id = t.id();
      if (IsPending(t.state()) || curves) {
        absl::StatusOr<std::vector<Measurement>> ms =
            store->ListMeasurements(stored.study_id, id);
        if (!ms.ok()) return ms.status();
        if (!ms->empty() && IsPending(t.state())) {
          state->last_measurement[id] = ms->back();
        }
        if (curves) {
          for (const Measurement& m : *ms) state->AddToCurve(id, m);
          state->curves[id].trial_id = id;
          state->curves[id].completed = t.state() == Trial::SUCCEEDED;
        }
      }
      state->trials.Put(std::move(t));
    }
    absl::StatusOr<std::unique_ptr<tuner::Designer>> designer =
        tuner::CreateDesigner(state->study.spec());
    if (!designer.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("recovering ", state->study.name(), ": ",
                       designer.status().message()));
    }
    state->designer = std::move(*designer);
    manager->by_display_name_[state->study.display_name()] = state->id;
    manager->studies_[state->id] = std::move(state);
  }
  return manager;
}

absl::StatusOr<std::shared_ptr<StudyManager::StudyState>>
StudyManager::FindStudy(int64_t study_id) const {
  absl::MutexLock lock(&mu_);
  auto it = studies_.find(study_id);
  if (it == studies_.end()) {
    return absl::NotFoundError(
        absl::StrCat("study ", StudyName(study_id), " not found"));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<StudyManager::StudyState>>
StudyManager::FindStudyByName(const std::string& name,
                              const char* field) const {
  absl::StatusOr<int64_t> id = ParseStudyName(name, field);
  if (!id.ok()) return id.status();
  return FindStudy(*id);
}

absl::StatusOr<StudyManager::TrialRef> StudyManager::ResolveTrial(
    const std::string& name, const char* field) const {
  absl::StatusOr<TrialName> tn = ParseTrialName(name, field);
  if (!tn.ok()) return tn.status();
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudy(tn->study_id);
  if (!state.ok()) return state.status();
  return TrialRef{std::move(*state), tn->trial_id};
}

// ---------------------------------------------------------------- studies

absl::StatusOr<Study> StudyManager::CreateStudy(const Study& request) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  if (request.display_name().empty()) {
    return absl::InvalidArgumentError("study.display_name: must not be empty");
  }
  if (request.display_name().size() > 256) {
    return absl::InvalidArgumentError(
        "study.display_name: longer than 256 characters");
  }
  if (absl::Status s = tuner::ValidateStudySpec(request.spec()); !s.ok()) {
    return s;
  }
  if (validate_spec_) {
    if (absl::Status s = validate_spec_(request.spec()); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<tuner::Designer>> designer =
      tuner::CreateDesigner(request.spec());
  if (!designer.ok()) return designer.status();

  Study study;
  study.set_display_name(request.display_name());
  *study.mutable_spec() = request.spec();
  study.set_state(Study::ACTIVE);
  SetTimestamp(clock_->Now(), study.mutable_create_time());

  absl::MutexLock lock(&mu_);
  if (by_display_name_.count(study.display_name()) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("study.display_name: a study named '",
                     study.display_name(), "' already exists"));
  }
  absl::StatusOr<int64_t> id;
  {
    WriteTimer timer(observer_);
    id = store_->CreateStudy(study);
  }
  if (!id.ok()) return id.status();
  study.set_name(StudyName(*id));
  auto state = std::make_shared<StudyState>(*id);
  absl::MutexLock study_lock(&state->mu);
  state->study = study;
  state->designer = std::move(*designer);
  Study view = state->View();
  by_display_name_[study.display_name()] = *id;
  studies_[*id] = std::move(state);
  return view;
}

absl::StatusOr<Study> StudyManager::GetStudy(const std::string& name) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  Study view;
  {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    view = st.View();
  }
  return Finish<absl::StatusOr<Study>>(AwaitWrites(scope.pending, false),
                                       std::move(view));
}

absl::StatusOr<Study> StudyManager::LookupStudy(
    const std::string& display_name) {
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_display_name_.find(display_name);
    if (it == by_display_name_.end()) {
      return absl::NotFoundError(
          absl::StrCat("no study with display_name '", display_name, "'"));
    }
    id = it->second;
  }
  return GetStudy(StudyName(id));
}

absl::StatusOr<StudyPage> StudyManager::ListStudies(
    int page_size, const std::string& page_token) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  if (page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: ", page_size, " must be >= 0"));
  }
  if (page_size == 0) page_size = 100;
  absl::StatusOr<int64_t> after = ParsePageToken(page_token);
  if (!after.ok()) return after.status();
  std::vector<std::shared_ptr<StudyState>> states;
  bool more = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = studies_.upper_bound(*after); it != studies_.end(); ++it) {
      if (static_cast<int>(states.size()) == page_size) {
        more = true;
        break;
      }
      states.push_back(it->second);
    }
  }
  StudyPage page;
  WriteScope scope;
  for (const auto& state : states) {
    StudyLock lock(&state->mu, &state->last_write, &scope);
    if (!state->deleted) page.studies.push_back(state->View());
  }
  if (more && !states.empty()) {
    page.next_page_token = absl::StrCat(states.back()->id);
  }
  return Finish<absl::StatusOr<StudyPage>>(AwaitWrites(scope.pending, false),
                                           std::move(page));
}

absl::Status StudyManager::DeleteStudy(const std::string& name) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(name, "name");
  if (!state.ok()) return state.status();
  absl::MutexLock lock(&mu_);
  absl::MutexLock study_lock(&(*state)->mu);
  if ((*state)->deleted) {
    return absl::NotFoundError(absl::StrCat("study ", name, " not found"));
  }
  {
    WriteTimer timer(observer_);
    if (absl::Status s = store_->DeleteStudy((*state)->id); !s.ok()) return s;
  }
  (*state)->deleted = true;
  by_display_name_.erase((*state)->study.display_name());
  studies_.erase((*state)->id);
  return absl::OkStatus();
}

absl::StatusOr<Study> StudyManager::SetStudyState(const std::string& name,
                                                  Study::State new_state) {
  if (new_state != Study::ACTIVE && new_state != Study::INACTIVE &&
      new_state != Study::COMPLETED) {
    return absl::InvalidArgumentError(
        absl::StrCat("state: ", Study::State_Name(new_state),
                     " cannot be set; use ACTIVE, INACTIVE or COMPLETED"));
  }
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<Study> result = [&]() -> absl::StatusOr<Study> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    const StudySpec& spec = st.study.spec();
    if (new_state == Study::ACTIVE && spec.max_trials() > 0 &&
        static_cast<int64_t>(st.trials.size()) >= spec.max_trials()) {
      return absl::FailedPreconditionError(
          absl::StrCat("study ", name, " cannot be reactivated: max_trials (",
                       spec.max_trials(), ") already reached"));
    }
    Study updated = st.study;
    updated.set_state(new_state);
    updated.set_inactive_reason(new_state == Study::ACTIVE ? ""
                                                           : "set by a user");
    if (absl::Status s = Queued(store_->EnqueueUpdateStudy(st.id, updated),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.study = std::move(updated);
    if (new_state == Study::ACTIVE) st.exhausted = false;
    return st.View();
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

// ---------------------------------------------------------------- trials

absl::StatusOr<SuggestResult> StudyManager::SuggestTrials(
    const std::string& parent, int count, const std::string& client_id) {
  if (count < 1 || count > cairn::v1::kMaxSuggestionCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("suggestion_count: ", count, " must be between 1 and ",
                     cairn::v1::kMaxSuggestionCount));
  }
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<SuggestResult> out = [&]() -> absl::StatusOr<SuggestResult> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    SuggestResult result;

    // Vizier: a client asking again gets its pending trials back.
    if (!client_id.empty()) {
      for (const Trial* t : st.trials.PendingOf(client_id)) {
        result.trials.push_back(*t);
      }
      if (!result.trials.empty()) {
        result.study_state = st.study.state();
        result.message =
            absl::StrCat("returning the ", result.trials.size(),
                         " pending trial(s) of client '", client_id, "'");
        return result;
      }
    }

    auto finish = [&](std::string message) -> absl::StatusOr<SuggestResult> {
      if (absl::Status s = st.AdvanceState(store_, &scope); !s.ok()) return s;
      result.study_state = st.study.state();
      if (result.trials.empty() && st.study.state() != Study::ACTIVE) {
        message = absl::StrCat("study is ", Study::State_Name(st.study.state()),
                               st.study.inactive_reason().empty() ? "" : ": ",
                               st.study.inactive_reason());
      }
      result.message = std::move(message);
      return result;
    };

    if (st.study.state() != Study::ACTIVE) return finish("");
    const StudySpec& spec = st.study.spec();
    int64_t n = count;
    std::string limit_message;
    const int64_t pending = st.CountPending();
    if (spec.max_trials() > 0) {
      const int64_t left =
          spec.max_trials() - static_cast<int64_t>(st.trials.size());
      if (left < n) {
        n = std::max<int64_t>(left, 0);
        limit_message =
            absl::StrCat("max_trials (", spec.max_trials(), ") reached; ",
                         pending, " trial(s) still pending");
      }
    }
    if (spec.max_parallel_trials() > 0) {
      const int64_t room = spec.max_parallel_trials() - pending;
      if (room < n) {
        n = std::max<int64_t>(room, 0);
        limit_message =
            absl::StrCat("max_parallel_trials (", spec.max_parallel_trials(),
                         ") trials are pending");
      }
    }
    if (n == 0) return finish(limit_message);

    tuner::DesignerContext context;
    context.spec = &spec;
    context.trials = st.trials.InIdOrder();
    context.pending = st.trials.Pending();
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
        st.designer->Suggest(context, static_cast<int>(n));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!suggestions.ok()) return suggestions.status();
    if (observer_ != nullptr) {
      observer_->OnSuggest(AlgorithmName(spec.algorithm()), seconds,
                           static_cast<int>(suggestions->size()));
    }
    if (static_cast<int64_t>(suggestions->size()) < n) {
      st.exhausted = true;
      limit_message = "search space exhausted";
    }
    std::vector<Trial> created;
    const absl::Time now = clock_->Now();
    int64_t next_id = st.max_trial_id;
    for (tuner::Suggestion& s : *suggestions) {
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
            absl::StrCat(seconds / std::max<size_t>(1, suggestions->size()));
      }
      created.push_back(std::move(t));
    }
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, created),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.max_trial_id = next_id;
    for (Trial& t : created) {
      result.trials.push_back(t);
      st.trials.Put(std::move(t));
    }
    return finish(limit_message);
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(out));
}

absl::StatusOr<Trial> StudyManager::CreateTrial(const std::string& parent,
                                                const Trial& request) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<Trial> result = [&]() -> absl::StatusOr<Trial> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    const StudySpec& spec = st.study.spec();
    std::vector<cairn::v1::Parameter> params(request.parameters().begin(),
                                             request.parameters().end());
    if (absl::Status s = tuner::ValidateTrialParameters(spec, params);
        !s.ok()) {
      return s;
    }
    const bool has_final = request.has_final_measurement();
    if (has_final) {
      if (absl::Status s = tuner::ValidateFinalMeasurement(
              spec, request.final_measurement());
          !s.ok()) {
        return s;
      }
    }
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
    Trial t;
    t.set_id(st.max_trial_id + 1);
    t.set_name(TrialResourceName(st.id, t.id()));
    *t.mutable_parameters() = request.parameters();
    *t.mutable_labels() = request.labels();
    t.set_client_id(request.client_id());
    const absl::Time now = clock_->Now();
    SetTimestamp(now, t.mutable_start_time());
    if (has_final) {
      t.set_state(Trial::SUCCEEDED);
      *t.mutable_final_measurement() = request.final_measurement();
      SetTimestamp(now, t.mutable_end_time());
    } else {
      t.set_state(Trial::ACTIVE);
    }
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.max_trial_id = t.id();
    st.trials.Put(t);
    if (has_final && observer_ != nullptr) {
      observer_->OnTrialFinished(st.study.name(), "succeeded");
    }
    return t;
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

absl::StatusOr<Trial> StudyManager::GetTrial(const std::string& name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  Trial out;
  {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
    }
    out = it->second;
  }
  // Measurements are read from the store once everything queued so far is
  // durable (so the list includes every measurement already acknowledged).
  if (absl::Status s = AwaitWrites(scope.pending, false); !s.ok()) return s;
  absl::StatusOr<std::vector<Measurement>> ms =
      store_->ListMeasurements(st.id, tn->trial_id);
  if (!ms.ok()) return ms.status();
  for (Measurement& m : *ms) *out.add_measurements() = std::move(m);
  return out;
}

absl::StatusOr<TrialPage> StudyManager::ListTrials(
    const std::string& parent, int page_size, const std::string& page_token,
    bool include_measurements) {
  if (page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: ", page_size, " must be >= 0"));
  }
  if (page_size == 0) page_size = 1000;
  absl::StatusOr<int64_t> after = ParsePageToken(page_token);
  if (!after.ok()) return after.status();
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  TrialPage page;
  {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    for (auto it = st.trials.upper_bound(*after); it != st.trials.end(); ++it) {
      if (static_cast<int>(page.trials.size()) == page_size) {
        page.next_page_token = absl::StrCat(page.trials.back().id());
        break;
      }
      page.trials.push_back(it->second);
    }
  }
  if (absl::Status s = AwaitWrites(scope.pending, false); !s.ok()) return s;
  if (include_measurements) {
    for (Trial& t : page.trials) {
      absl::StatusOr<std::vector<Measurement>> ms =
          store_->ListMeasurements(st.id, t.id());
      if (!ms.ok()) return ms.status();
      for (Measurement& m : *ms) *t.add_measurements() = std::move(m);
    }
  }
  return page;
}

absl::Status StudyManager::DeleteTrial(const std::string& name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  // Synchronous: Store::DeleteTrial drains the commit queue itself.
  absl::MutexLock lock(&st.mu);
  if (!st.trials.contains(tn->trial_id)) {
    return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
  }
  {
    WriteTimer timer(observer_);
    if (absl::Status s = store_->DeleteTrial(st.id, tn->trial_id); !s.ok()) {
      return s;
    }
  }
  st.trials.Erase(tn->trial_id);
  st.last_measurement.erase(tn->trial_id);
  return absl::OkStatus();
}

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
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  if (reports.empty() && job == nullptr) return 0;
  // Resolve every study first, then lock them in id order (no deadlocks).
  std::map<int64_t, std::shared_ptr<StudyState>> states;
  auto resolve = [&](const std::string& name) -> absl::StatusOr<TrialName> {
    absl::StatusOr<TrialName> tn = ParseTrialName(name, "trial_name");
    if (!tn.ok()) return tn.status();
    if (states.count(tn->study_id) == 0) {
      auto state = FindStudy(tn->study_id);
      if (!state.ok()) return state.status();
      states[tn->study_id] = *state;
    }
    return tn;
  };
  std::vector<TrialName> names;
  names.reserve(reports.size());
  for (const MeasurementReport& report : reports) {
    absl::StatusOr<TrialName> tn = resolve(report.trial_name);
    if (!tn.ok()) return tn.status();
    names.push_back(*tn);
  }
  std::optional<TrialName> job_name;
  if (job != nullptr) {
    absl::StatusOr<TrialName> tn = resolve(*job_trial);
    if (!tn.ok()) return tn.status();
    job_name = *tn;
  }
  WriteScope scope;
  absl::StatusOr<int64_t> result = [&]() -> absl::StatusOr<int64_t> {
    std::vector<std::unique_ptr<StudyLock>> locks;
    for (auto& [id, state] : states) {
      locks.push_back(
          std::make_unique<StudyLock>(&state->mu, &state->last_write, &scope));
    }
    const absl::Time now = clock_->Now();
    std::vector<Store::MeasurementWrite> writes;
    writes.reserve(reports.size());
    for (size_t i = 0; i < reports.size(); ++i) {
      StudyState& st = *states[names[i].study_id];
      if (st.deleted) {
        return absl::NotFoundError(
            absl::StrCat("study ", StudyName(st.id), " not found"));
      }
      auto it = st.trials.find(names[i].trial_id);
      if (it == st.trials.end()) {
        return absl::NotFoundError(
            absl::StrCat("trial ", reports[i].trial_name, " not found"));
      }
      if (!IsPending(it->second.state())) {
        return absl::FailedPreconditionError(
            absl::StrCat("trial ", reports[i].trial_name, " is ",
                         Trial::State_Name(it->second.state()),
                         "; measurements can only be added to pending trials"));
      }
      if (absl::Status s = tuner::ValidateMeasurement(reports[i].measurement);
          !s.ok()) {
        return s;
      }
      Store::MeasurementWrite w{st.id, names[i].trial_id,
                                reports[i].measurement};
      if (!w.measurement.has_elapsed_duration() &&
          it->second.has_start_time()) {
        SetDuration(now - FromTimestamp(it->second.start_time()),
                    w.measurement.mutable_elapsed_duration());
      }
      writes.push_back(std::move(w));
    }
    const Trial* job_trial_now = nullptr;
    if (job_name.has_value()) {
      StudyState& st = *states[job_name->study_id];
      auto it = st.trials.find(job_name->trial_id);
      if (st.deleted || it == st.trials.end()) {
        return absl::NotFoundError(
            absl::StrCat("trial ", *job_trial, " not found"));
      }
      job_trial_now = &it->second;
    }
    if (!writes.empty()) {
      absl::StatusOr<std::shared_ptr<PendingWrite>> queued =
          store_->EnqueueAppendMeasurements(writes);
      if (!queued.ok()) return queued.status();
      // One write for all studies: each study's latest write is it.
      for (auto& [id, state] : states) {
        if (absl::Status s = Queued(*queued, &state->last_write, &scope);
            !s.ok()) {
          return s;
        }
      }
    }
    if (job_trial_now != nullptr) {
      // Queued right behind the measurements: the same group commit.
      StudyState& st = *states[job_name->study_id];
      Trial t = *job_trial_now;
      *t.mutable_job() = *job;
      if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                  &st.last_write, &scope);
          !s.ok()) {
        return s;
      }
      st.trials.Put(std::move(t));
    }
    std::set<std::pair<int64_t, int64_t>> to_check;
    for (Store::MeasurementWrite& w : writes) {
      StudyState& st = *states[w.study_id];
      if (st.HasEarlyStopping()) {
        st.AddToCurve(w.trial_id, w.measurement);
        to_check.emplace(w.study_id, w.trial_id);
      }
      st.last_measurement[w.trial_id] = std::move(w.measurement);
    }
    // Early stopping: a trial the rule stops becomes STOPPING; its worker (or
    // the job runner) sees that and completes it with its last measurement.
    for (const auto& [study_id, trial_id] : to_check) {
      StudyState& st = *states[study_id];
      auto found = st.trials.find(trial_id);
      if (found == st.trials.end()) continue;
      const Trial& t = found->second;
      if (t.state() != Trial::ACTIVE) continue;
      // Every curve, by pointer (ShouldStop skips the trial's own).
      std::vector<const tuner::Curve*> others;
      others.reserve(st.curves.size());
      for (const auto& [id, c] : st.curves) others.push_back(&c);
      tuner::StopDecision d =
          tuner::ShouldStop(st.study.spec(), st.curves[trial_id], others);
      if (observer_ != nullptr) {
        observer_->OnEarlyStoppingDecision(
            st.study.name(),
            st.study.spec().early_stopping().has_median() ? "median" : "asha",
            d.stop);
      }
      if (!d.stop) continue;
      Trial stopping = t;
      stopping.set_state(Trial::STOPPING);
      (*stopping.mutable_metadata())["early_stopping_reason"] = d.reason;
      if (absl::Status s =
              Queued(store_->EnqueuePutTrials(study_id, {stopping}),
                     &st.last_write, &scope);
          !s.ok()) {
        return s;
      }
      st.trials.Put(std::move(stopping));
    }
    return static_cast<int64_t>(writes.size());
  }();
  if (absl::Status s = AwaitWrites(scope.pending, scope.wrote); !s.ok()) {
    return s;
  }
  if (result.ok() && observer_ != nullptr) {
    observer_->OnMeasurementsWritten(*result);
  }
  return result;
}

absl::StatusOr<Trial> StudyManager::CompleteTrial(
    const std::string& name, const std::optional<Measurement>& final_m,
    bool infeasible, const std::string& infeasible_reason) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result = [&]() -> absl::StatusOr<Trial> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
    }
    if (absl::Status s = CheckPending(it->second, name); !s.ok()) {
      return s;
    }
    const StudySpec& spec = st.study.spec();
    Trial t = it->second;
    const bool stopped_early = t.state() == Trial::STOPPING;
    std::string outcome;
    if (infeasible) {
      t.set_state(Trial::INFEASIBLE);
      t.set_infeasible_reason(infeasible_reason.empty() ? "infeasible"
                                                        : infeasible_reason);
      outcome = "infeasible";
    } else {
      Measurement final_measurement;
      if (final_m.has_value()) {
        if (absl::Status s = tuner::ValidateFinalMeasurement(spec, *final_m);
            !s.ok()) {
          return s;
        }
        for (const auto& metric : final_m->metrics()) {
          bool known = false;
          for (const auto& ms : spec.metrics()) {
            known = known || ms.metric_id() == metric.metric_id();
          }
          if (!known) {
            return absl::InvalidArgumentError(
                absl::StrCat("final_measurement.metrics: metric '",
                             metric.metric_id(), "' is not in the study spec"));
          }
        }
        final_measurement = *final_m;
      } else {
        auto last = st.last_measurement.find(t.id());
        if (last == st.last_measurement.end()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "trial ", name,
              " has no measurement: give a final measurement or mark it "
              "infeasible"));
        }
        if (absl::Status s =
                tuner::ValidateFinalMeasurement(spec, last->second);
            !s.ok()) {
          return absl::FailedPreconditionError(
              absl::StrCat("the last measurement of trial ", name,
                           " cannot be final: ", s.message()));
        }
        final_measurement = last->second;
      }
      t.set_state(Trial::SUCCEEDED);
      *t.mutable_final_measurement() = std::move(final_measurement);
      t.set_stopped_early(stopped_early);
      outcome = stopped_early ? "stopped_early" : "succeeded";
    }
    SetTimestamp(clock_->Now(), t.mutable_end_time());
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.trials.Put(t);
    st.last_measurement.erase(t.id());
    if (st.HasEarlyStopping() && t.state() == Trial::SUCCEEDED) {
      st.curves[t.id()].trial_id = t.id();
      st.curves[t.id()].completed = true;
    }
    if (observer_ != nullptr) {
      observer_->OnTrialFinished(st.study.name(), outcome);
    }
    if (absl::Status s = st.AdvanceState(store_, &scope); !s.ok()) return s;
    return t;
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

absl::StatusOr<Trial> StudyManager::StopTrial(const std::string& name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result = [&]() -> absl::StatusOr<Trial> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
    }
    if (absl::Status s = CheckPending(it->second, name); !s.ok()) {
      return s;
    }
    if (it->second.state() == Trial::STOPPING) return it->second;
    Trial t = it->second;
    t.set_state(Trial::STOPPING);
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.trials.Put(t);
    return t;
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

absl::StatusOr<std::pair<bool, std::string>> StudyManager::CheckEarlyStopping(
    const std::string& trial_name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "trial_name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  using Result = absl::StatusOr<std::pair<bool, std::string>>;
  Result result = [&]() -> Result {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(
          absl::StrCat("trial ", trial_name, " not found"));
    }
    if (it->second.state() == Trial::STOPPING) {
      auto reason = it->second.metadata().find("early_stopping_reason");
      return std::make_pair(true, reason != it->second.metadata().end()
                                      ? reason->second
                                      : std::string("trial was asked to stop"));
    }
    return std::make_pair(false, std::string());
  }();
  return Finish(AwaitWrites(scope.pending, false), std::move(result));
}

absl::StatusOr<std::vector<Trial>> StudyManager::ListOptimalTrials(
    const std::string& parent) {
  if (absl::Status s = CheckHealthy(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  std::vector<Trial> out;
  {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    const std::vector<const Trial*>& all = st.trials.InIdOrder();
    for (size_t i : OptimalTrialIndices(st.study.spec(), all)) {
      out.push_back(*all[i]);
    }
  }
  return Finish<absl::StatusOr<std::vector<Trial>>>(
      AwaitWrites(scope.pending, false), std::move(out));
}

absl::StatusOr<std::vector<Measurement>> StudyManager::GetMetricHistory(
    const std::string& trial_name, const std::string& metric_id) {
  if (metric_id.empty()) {
    return absl::InvalidArgumentError("metric_id: must not be empty");
  }
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "trial_name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    if (!st.trials.contains(tn->trial_id)) {
      return absl::NotFoundError(
          absl::StrCat("trial ", trial_name, " not found"));
    }
  }
  if (absl::Status s = AwaitWrites(scope.pending, false); !s.ok()) return s;
  absl::StatusOr<std::vector<Measurement>> ms =
      store_->ListMeasurements(st.id, tn->trial_id);
  if (!ms.ok()) return ms.status();
  std::vector<Measurement> out;
  for (Measurement& m : *ms) {
    for (const auto& metric : m.metrics()) {
      if (metric.metric_id() != metric_id) continue;
      Measurement point;
      point.set_step_count(m.step_count());
      *point.mutable_elapsed_duration() = m.elapsed_duration();
      *point.add_metrics() = metric;
      out.push_back(std::move(point));
      break;
    }
  }
  return out;
}

std::vector<JobStudyView> StudyManager::JobStudies() const {
  // Failed: launch nothing more (the in-memory state is ahead of the disk).
  if (!CheckHealthy().ok()) return {};
  std::vector<std::shared_ptr<StudyState>> states;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : studies_) states.push_back(s);
  }
  std::vector<JobStudyView> out;
  for (const auto& s : states) {
    absl::MutexLock lock(&s->mu);
    if (s->deleted || s->study.spec().job_template().command().empty()) {
      continue;
    }
    JobStudyView view;
    view.study_id = s->id;
    view.study = s->View();
    for (const auto& [id, t] : s->trials) {
      if (IsPending(t.state())) view.pending.push_back(t);
    }
    out.push_back(std::move(view));
  }
  return out;
}

absl::Status StudyManager::UpdateTrialJob(const std::string& trial_name,
                                          const cairn::v1::TrialJob& job) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::Status result = [&]() -> absl::Status {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(
          absl::StrCat("trial ", trial_name, " not found"));
    }
    Trial t = it->second;
    *t.mutable_job() = job;
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.trials.Put(std::move(t));
    return absl::OkStatus();
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

absl::StatusOr<Trial> StudyManager::FailTrial(const std::string& trial_name,
                                              const std::string& reason) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result = [&]() -> absl::StatusOr<Trial> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(
          absl::StrCat("trial ", trial_name, " not found"));
    }
    if (absl::Status s = CheckPending(it->second, trial_name); !s.ok()) {
      return s;
    }
    Trial t = it->second;
    t.set_state(Trial::FAILED);
    t.set_infeasible_reason(reason);
    SetTimestamp(clock_->Now(), t.mutable_end_time());
    if (absl::Status s = Queued(store_->EnqueuePutTrials(st.id, {t}),
                                &st.last_write, &scope);
        !s.ok()) {
      return s;
    }
    st.trials.Put(t);
    st.last_measurement.erase(t.id());
    if (observer_ != nullptr)
      observer_->OnTrialFinished(st.study.name(), "failed");
    if (absl::Status s = st.AdvanceState(store_, &scope); !s.ok()) return s;
    return t;
  }();
  return Finish(AwaitWrites(scope.pending, scope.wrote), std::move(result));
}

absl::StatusOr<Trial> StudyManager::GetTrialBasic(const std::string& name) {
  absl::StatusOr<TrialRef> tn = ResolveTrial(name, "name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  absl::StatusOr<Trial> result = [&]() -> absl::StatusOr<Trial> {
    StudyLock lock(&st.mu, &st.last_write, &scope);
    auto it = st.trials.find(tn->trial_id);
    if (it == st.trials.end()) {
      return absl::NotFoundError(absl::StrCat("trial ", name, " not found"));
    }
    return it->second;
  }();
  return Finish(AwaitWrites(scope.pending, false), std::move(result));
}

int64_t StudyManager::num_studies() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(studies_.size());
}

int64_t StudyManager::num_trials() const {
  std::vector<std::shared_ptr<StudyState>> states;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : studies_) states.push_back(s);
  }
  int64_t n = 0;
  for (const auto& s : states) {
    absl::MutexLock lock(&s->mu);
    n += static_cast<int64_t>(s->trials.size());
  }
  return n;
}

std::vector<StudySummary> StudyManager::Summaries() const {
  std::vector<std::shared_ptr<StudyState>> states;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, s] : studies_) states.push_back(s);
  }
  std::vector<StudySummary> out;
  for (const auto& s : states) {
    absl::MutexLock lock(&s->mu);
    if (s->deleted) continue;
    StudySummary summary;
    summary.study = s->View();
    for (const auto& [id, t] : s->trials) {
      ++summary.trials_by_state[Trial::State_Name(t.state())];
    }
    const StudySpec& spec = s->study.spec();
    const std::vector<const Trial*>& all = s->trials.InIdOrder();
    for (size_t i : OptimalTrialIndices(spec, all)) {
      for (const auto& metric : spec.metrics()) {
        auto v = FinalMetricValue(*all[i], metric.metric_id());
        if (!v) continue;
        auto [it, inserted] =
            summary.best_by_metric.emplace(metric.metric_id(), *v);
        const bool better = metric.goal() == cairn::v1::MetricSpec::MINIMIZE
                                ? *v < it->second
                                : *v > it->second;
        if (!inserted && better) it->second = *v;
      }
    }
    for (const auto& [id, m] : s->last_measurement) {
      auto t = s->trials.find(id);
      if (t == s->trials.end() || !IsPending(t->second.state())) continue;
      for (const auto& metric : m.metrics()) {
        summary.running_metrics[id][metric.metric_id()] = metric.value();
      }
    }
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace cairn
