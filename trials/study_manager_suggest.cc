// Study controller: SuggestTrials. The designer runs on a snapshot of the
// study outside the study's lock, so reads, reports and other calls on the
// study proceed while it computes; the study's suggestion gate lets one
// suggestion at a time run for a study. See study_manager.h for the
// contract.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "api/resource_names.h"
#include "api/study_defaults.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "trials/suggest_pool.h"
#include "trials/trial_summary.h"
#include "tuner/designer.h"
#include "tuner/gp/suggestion_kinds.h"
#include "tuner/quasi_random_designer.h"
#include "tuner/search_space.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::Deps;
using study_manager_internal::Finish;

namespace {

// Trial metadata of a point suggested again (repeat_points_when_exhausted).
constexpr char kRepeated[] = "repeated_point";

// What one designer run computes on, copied under the study's lock.
struct SuggestSnapshot {
  StudySpec spec;
  std::vector<Trial> trials;  // Every trial, in id order.
  std::shared_ptr<tuner::Designer> designer;
  int64_t count = 0;    // Suggestions to ask for (what the limits allowed).
  std::string message;  // The limit that cut the count, if one did.
};

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
int64_t AllowedTrials(const StudyState& st, int64_t count, std::string* message)
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

// The last step of a suggestion: advances the study's state and says why
// fewer trials than asked came back.
absl::StatusOr<SuggestResult> FinishSuggest(StudyState& st,
                                            StudyDataStore* store,
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

// Under the study's lock: answers the asks when they need no designer run
// (a study that is not ACTIVE, no room, the disk reserve) by returning the
// answer; otherwise fills `*snapshot` for `count` suggestions and returns
// nullopt.
std::optional<absl::StatusOr<SuggestResult>> PrepareSuggest(
    StudyState& st, int64_t count, const Deps& deps, WriteScope* scope,
    SuggestSnapshot* snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  SuggestResult result;
  if (st.study.state() != Study::ACTIVE) {
    return FinishSuggest(st, deps.store, scope, std::move(result), "");
  }
  std::string message;
  const int64_t n = AllowedTrials(st, count, &message);
  if (n == 0) {
    return FinishSuggest(st, deps.store, scope, std::move(result), message);
  }
  if (!deps.new_trials.ok()) return deps.new_trials;
  snapshot->spec = st.study.spec();
  snapshot->trials.reserve(st.trials.size());
  for (const Trial* t : st.trials.InIdOrder()) snapshot->trials.push_back(*t);
  snapshot->designer = st.designer;
  snapshot->count = n;
  snapshot->message = std::move(message);
  return std::nullopt;
}

// How many of `suggestions` the designer's deadline fallback produced.
int CountDeadlineFallbacks(const std::vector<tuner::Suggestion>& suggestions) {
  int n = 0;
  for (const tuner::Suggestion& s : suggestions) {
    auto kind = s.metadata.find("suggestion_kind");
    if (kind != s.metadata.end() && kind->second == gp::kDeadlineKind) ++n;
  }
  return n;
}

// Asks `designer` for the snapshot's suggestions (no lock held), timing it
// into `*seconds` and reporting it to `observer` (may be null).
// `deadline_fallback`: `designer` answers in place of the study's own,
// whose deadline passed; its trials say so (kDeadlineKind).
absl::StatusOr<std::vector<tuner::Suggestion>> RunDesigner(
    const SuggestSnapshot& snapshot, tuner::Designer& designer,
    bool deadline_fallback, StudyObserver* observer, double* seconds) {
  tuner::DesignerContext context;
  context.spec = &snapshot.spec;
  context.trials.reserve(snapshot.trials.size());
  for (const Trial& t : snapshot.trials) context.trials.push_back(&t);
  context.pending = tuner::PendingAmong(context.trials);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      designer.Suggest(context, static_cast<int>(snapshot.count));
  *seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!suggestions.ok()) return suggestions.status();
  if (deadline_fallback) {
    for (tuner::Suggestion& s : *suggestions) {
      s.metadata["suggestion_kind"] = gp::kDeadlineKind;
    }
  }
  if (observer != nullptr) {
    const std::string algorithm = StudySpec::Algorithm_Name(
        api::EffectiveAlgorithm(snapshot.spec.algorithm()));
    observer->OnSuggest(algorithm, *seconds,
                        static_cast<int>(suggestions->size()));
    const int fallbacks = CountDeadlineFallbacks(*suggestions);
    if (fallbacks > 0) observer->OnDeadlineFallbacks(algorithm, fallbacks);
  }
  return suggestions;
}

// StudySpec.repeat_points_when_exhausted: fills `*suggestions` up to the
// snapshot's count with points already suggested when the designer returned
// fewer. The distinct points of the study's trials and then of the
// designer's suggestions take turns in that order, the turn going on after
// the repeats made so far (trials marked kRepeated), so a client asking one
// at a time cycles through them. A pure function of the snapshot, as the
// designer is. Does nothing for other studies.
void FillWithRepeats(const SuggestSnapshot& snapshot,
                     std::vector<tuner::Suggestion>* suggestions) {
  if (!snapshot.spec.repeat_points_when_exhausted() ||
      static_cast<int64_t>(suggestions->size()) >= snapshot.count) {
    return;
  }
  std::vector<std::vector<cairn::v1::Parameter>> points;
  absl::flat_hash_set<std::string> keys;
  int64_t repeats = 0;
  for (const Trial& t : snapshot.trials) {
    if (t.metadata().contains(kRepeated)) ++repeats;
    if (keys.insert(tuner::SearchSpace::CanonicalKey(t.parameters())).second) {
      points.emplace_back(t.parameters().begin(), t.parameters().end());
    }
  }
  for (const tuner::Suggestion& s : *suggestions) {
    if (keys.insert(tuner::SearchSpace::CanonicalKey(s.parameters)).second) {
      points.push_back(s.parameters);
    }
  }
  if (points.empty()) return;
  for (int64_t turn = repeats;
       static_cast<int64_t>(suggestions->size()) < snapshot.count; ++turn) {
    tuner::Suggestion s;
    s.parameters = points[turn % points.size()];
    s.metadata[kRepeated] = "true";
    suggestions->push_back(std::move(s));
  }
}

// The ACTIVE trials of `suggestions`, numbered after st.max_trial_id;
// suggestion i goes to client owners[i].
std::vector<Trial> SuggestedTrials(const StudyState& st,
                                   std::vector<tuner::Suggestion>& suggestions,
                                   const std::vector<std::string>& owners,
                                   absl::Time now, double seconds)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  std::vector<Trial> created;
  int64_t next_id = st.max_trial_id;
  for (size_t i = 0; i < suggestions.size(); ++i) {
    tuner::Suggestion& s = suggestions[i];
    Trial t;
    t.set_id(++next_id);
    t.set_name(api::TrialResourceName(st.id, t.id()));
    t.set_state(Trial::ACTIVE);
    t.set_client_id(owners[i]);
    for (auto& p : s.parameters) *t.add_parameters() = std::move(p);
    *t.mutable_start_time() = util::ToProtoTimestamp(now);
    for (const auto& [k, v] : s.metadata) (*t.mutable_metadata())[k] = v;
    if (t.metadata().count("suggestion_seconds") == 0) {
      (*t.mutable_metadata())["suggestion_seconds"] =
          absl::StrCat(seconds / std::max<size_t>(1, suggestions.size()));
    }
    created.push_back(std::move(t));
  }
  return created;
}

int64_t TotalCount(const std::vector<SuggestAsk*>& asks) {
  int64_t n = 0;
  for (const SuggestAsk* ask : asks) n += ask->count;
  return n;
}

// Under the study's lock: answers the asks whose client has pending trials
// (Vizier: asking again returns them) and returns the others.
std::vector<SuggestAsk*> WithoutPendingClients(
    const StudyState& st, const std::vector<SuggestAsk*>& asks)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  std::vector<SuggestAsk*> left;
  for (SuggestAsk* ask : asks) {
    SuggestResult result;
    if (ClientPendingTrials(st, ask->client_id, &result)) {
      ask->result = std::move(result);
    } else {
      left.push_back(ask);
    }
  }
  return left;
}

// Splits `asks` into those that take new trials and `*repeats`: asks whose
// non-empty client_id an earlier taker has (they get its trials once the
// batch is committed, see AnswerRepeats).
std::vector<SuggestAsk*> Takers(const std::vector<SuggestAsk*>& asks,
                                std::vector<SuggestAsk*>* repeats) {
  std::vector<SuggestAsk*> takers;
  absl::flat_hash_set<std::string> clients;
  for (SuggestAsk* ask : asks) {
    if (!ask->client_id.empty() && !clients.insert(ask->client_id).second) {
      repeats->push_back(ask);
    } else {
      takers.push_back(ask);
    }
  }
  return takers;
}

// Under the study's lock, after a commit: each repeat gets the pending
// trials of its client, or its taker's answer when that got none.
void AnswerRepeats(const StudyState& st, const std::vector<SuggestAsk*>& takers,
                   const std::vector<SuggestAsk*>& repeats)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  for (SuggestAsk* repeat : repeats) {
    SuggestResult result;
    if (ClientPendingTrials(st, repeat->client_id, &result)) {
      repeat->result = std::move(result);
      continue;
    }
    for (const SuggestAsk* taker : takers) {
      if (taker->client_id == repeat->client_id) repeat->result = taker->result;
    }
  }
}

// Hands `created` (in order) to `takers`, each up to its count; `base`
// carries the study's state and the message for takers that got fewer.
void HandOut(const std::vector<SuggestAsk*>& takers,
             const std::vector<Trial>& created,
             const absl::StatusOr<SuggestResult>& base) {
  size_t next = 0;
  for (SuggestAsk* taker : takers) {
    if (!base.ok()) {
      taker->result = base.status();
      continue;
    }
    SuggestResult result = *base;
    const size_t end = std::min(created.size(), next + taker->count);
    result.trials.assign(created.begin() + next, created.begin() + end);
    if (static_cast<int>(result.trials.size()) == taker->count) {
      result.message.clear();
    }
    next = end;
    taker->result = std::move(result);
  }
}

// Under the study's lock again, after the designer ran: adds its
// suggestions to the study as it is now and answers `takers`. Other calls
// may have changed it meanwhile, so the checks of PrepareSuggest run again:
// a study that was deleted or stopped takes nothing, a client that got
// pending trials (a manual trial with its client_id) gets those, and the
// limits are applied to the current counts (suggestions beyond them are
// dropped). New ids follow the current max_trial_id. `snapshot.count`: what
// the designer was asked for (fewer back means the space is exhausted).
void CommitSuggestions(StudyState& st, const std::string& parent,
                       const std::vector<SuggestAsk*>& asked,
                       const SuggestSnapshot& snapshot,
                       std::vector<tuner::Suggestion> suggestions,
                       double seconds, const Deps& deps, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (st.deleted) {
    for (SuggestAsk* ask : asked) {
      ask->result =
          absl::NotFoundError(absl::StrCat("study ", parent, " not found"));
    }
    return;
  }
  const std::vector<SuggestAsk*> takers = WithoutPendingClients(st, asked);
  if (st.study.state() != Study::ACTIVE) {
    HandOut(takers, {}, FinishSuggest(st, deps.store, scope, {}, ""));
    return;
  }
  std::string message = snapshot.message;
  if (static_cast<int64_t>(suggestions.size()) < snapshot.count) {
    st.exhausted = true;
    message = "search space exhausted";
  }
  const int64_t n =
      AllowedTrials(st, std::min(snapshot.count, TotalCount(takers)), &message);
  if (static_cast<int64_t>(suggestions.size()) > n) suggestions.resize(n);
  std::vector<std::string> owners;
  for (const SuggestAsk* t : takers) {
    for (int k = 0; k < t->count && owners.size() < suggestions.size(); ++k) {
      owners.push_back(t->client_id);
    }
  }
  std::vector<Trial> created =
      SuggestedTrials(st, suggestions, owners, deps.clock->Now(), seconds);
  TrialSummary after =
      SummaryAfterPut(st.study.spec(), st.trials, st.summary, created);
  if (absl::Status s =
          Queued(deps.store->EnqueuePutTrials(st.id, created, &after),
                 &st.last_write, scope);
      !s.ok()) {
    HandOut(takers, {}, s);
    return;
  }
  if (!created.empty()) st.max_trial_id = created.back().id();
  for (const Trial& t : created) st.trials.Put(t);
  st.summary = std::move(after);
  HandOut(takers, created,
          FinishSuggest(st, deps.store, scope, {}, std::move(message)));
}

// Runs the designer for `takers` (no lock held; the quasi-random one for a
// deadline fallback) and commits its suggestions under the study's lock.
void RunAndCommit(StudyState& st, const std::vector<SuggestAsk*>& takers,
                  const std::vector<SuggestAsk*>& repeats,
                  const SuggestSnapshot& snapshot, bool deadline_fallback,
                  const Deps& deps, WriteScope* scope) {
  std::shared_ptr<tuner::Designer> designer = snapshot.designer;
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions;
  double seconds = 0;
  if (deadline_fallback) {
    absl::StatusOr<std::unique_ptr<tuner::Designer>> quasi =
        tuner::QuasiRandomDesigner::Create(snapshot.spec);
    if (quasi.ok()) {
      designer = *std::move(quasi);
    } else {
      designer = nullptr;
      suggestions = quasi.status();
    }
  }
  if (designer != nullptr) {
    suggestions = RunDesigner(snapshot, *designer, deadline_fallback,
                              deps.observer, &seconds);
  }
  LockedStudy lock(st, scope);
  if (!suggestions.ok()) {
    for (SuggestAsk* ask : takers) ask->result = suggestions.status();
  } else {
    FillWithRepeats(snapshot, &*suggestions);
    CommitSuggestions(st, takers.front()->parent, takers, snapshot,
                      *std::move(suggestions), seconds, deps, scope);
  }
  AnswerRepeats(st, takers, repeats);
}

}  // namespace

void StudyManager::AnswerAsks(StudyState& st,
                              const std::vector<SuggestAsk*>& asks,
                              bool deadline_fallback) {
  const Deps deps{store_, clock_, observer_, CheckReserve()};
  WriteScope scope;
  {
    // One designer run at a time per study: a batch sees the trials of the
    // one before as pending (never suggested twice), and a client that
    // asks again gets what its first request created. The deadline
    // fallback does not wait here for a GP batch of the study in progress.
    std::optional<absl::MutexLock> gate;
    if (!deadline_fallback) gate.emplace(&st.suggest_mu);
    SuggestSnapshot snapshot;
    std::vector<SuggestAsk*> takers, repeats;
    {
      LockedStudy lock(st, &scope);
      takers = Takers(WithoutPendingClients(st, asks), &repeats);
      std::optional<absl::StatusOr<SuggestResult>> answer;
      if (!takers.empty()) {
        answer =
            PrepareSuggest(st, TotalCount(takers), deps, &scope, &snapshot);
      }
      if (answer.has_value()) {
        for (SuggestAsk* ask : takers) ask->result = *answer;
        AnswerRepeats(st, takers, repeats);
        takers.clear();
      }
    }
    if (!takers.empty()) {
      RunAndCommit(st, takers, repeats, snapshot, deadline_fallback, deps,
                   &scope);
    }
  }
  const absl::Status awaited = AwaitScope(scope);
  for (SuggestAsk* ask : asks) {
    ask->result = Finish(awaited, std::move(ask->result));
  }
}

int StudyManager::TEST_GpAsksWaiting(int64_t study_id) const {
  return suggest_pool_ == nullptr ? 0 : suggest_pool_->Waiting(study_id);
}

bool StudyManager::UsesSuggestPool(StudyState& st) const {
  if (suggest_pool_ == nullptr) return false;
  absl::MutexLock lock(&st.mu);
  return api::EffectiveAlgorithm(st.study.spec().algorithm()) ==
         StudySpec::GP_BANDIT;
}

void StudyManager::AnswerPooledAsks(int64_t study_id,
                                    const std::vector<SuggestAsk*>& asks) {
  absl::StatusOr<std::shared_ptr<StudyState>> st = FindStudy(study_id);
  if (!st.ok()) {
    for (SuggestAsk* ask : asks) ask->result = st.status();
    return;
  }
  AnswerAsks(**st, asks, /*deadline_fallback=*/false);
}

absl::StatusOr<SuggestResult> StudyManager::SuggestTrials(
    const std::string& parent, int count, const std::string& client_id) {
  if (count < 1 || count > cairn::api::kMaxSuggestionCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("suggestion_count: ", count, " must be between 1 and ",
                     cairn::api::kMaxSuggestionCount));
  }
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  SuggestAsk ask;
  ask.parent = parent;
  ask.count = count;
  ask.client_id = client_id;
  if (!UsesSuggestPool(st)) {
    AnswerAsks(st, {&ask}, /*deadline_fallback=*/false);
  } else if (!suggest_pool_->Submit(st.id, &ask,
                                    absl::Now() + suggest_queue_deadline_)) {
    // Still queued at the deadline: quasi-random points now.
    AnswerAsks(st, {&ask}, /*deadline_fallback=*/true);
  }
  return std::move(ask.result);
}

}  // namespace cairn
