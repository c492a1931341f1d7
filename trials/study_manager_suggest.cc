// Study controller: SuggestTrials. A quick designer (random, quasi-random,
// grid) runs under the study's lock on the study as it is: no copy, and its
// trials are committed in the same critical section, so concurrent
// suggestions of a study each queue their write and share the store's
// group commit. Any other designer (GP_BANDIT) runs on a snapshot outside
// the study's lock, one at a time per study (the suggestion gate), so reads,
// reports and other calls on the study proceed while it computes. No lock is
// held while a call awaits its writes. See study_manager.h for the contract.
#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "api/limits.h"
#include "api/study_defaults.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "trials/suggest_pool.h"
#include "trials/suggest_steps.h"
#include "tuner/designer.h"
#include "tuner/quasi_random_designer.h"

namespace cairn {

using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::Deps;
using study_manager_internal::Finish;
using suggest_steps::Allowance;

namespace {

// What a designer run outside the study's lock computes on, copied under
// it: the trials the designer reads (every one, or the pending ones).
struct SuggestSnapshot {
  StudySpec spec;
  std::vector<Trial> trials;  // In id order.
  std::shared_ptr<tuner::Designer> designer;
  int64_t trial_count = 0;
  int64_t last_trial_id = 0;
};

// Copies into `*snapshot` what `designer` reads of the study.
void TakeSnapshot(const StudyState& st,
                  std::shared_ptr<tuner::Designer> designer,
                  SuggestSnapshot* snapshot)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const tuner::DesignerContext live =
      suggest_steps::LiveContext(st, designer->reads());
  snapshot->spec = st.study.spec();
  const std::vector<const Trial*>& read =
      live.trials.empty() ? live.pending : live.trials;
  snapshot->trials.reserve(read.size());
  for (const Trial* t : read) snapshot->trials.push_back(*t);
  snapshot->designer = std::move(designer);
  snapshot->trial_count = live.trial_count;
  snapshot->last_trial_id = live.last_trial_id;
}

// The designer's view of `snapshot` (valid while it lives).
tuner::DesignerContext SnapshotContext(const SuggestSnapshot& snapshot) {
  tuner::DesignerContext context;
  context.spec = &snapshot.spec;
  std::vector<const Trial*> trials;
  trials.reserve(snapshot.trials.size());
  for (const Trial& t : snapshot.trials) trials.push_back(&t);
  context.pending = tuner::PendingAmong(trials);
  if (snapshot.designer->reads() == tuner::Designer::Reads::kAllTrials) {
    context.trials = std::move(trials);
  }
  context.trial_count = snapshot.trial_count;
  context.last_trial_id = snapshot.last_trial_id;
  return context;
}

// Under the study's lock: the designer a suggestion runs, the quasi-random
// one for a deadline fallback (the study's own missed its deadline).
absl::StatusOr<std::shared_ptr<tuner::Designer>> DesignerFor(
    const StudyState& st, bool deadline_fallback)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (deadline_fallback) {
    absl::StatusOr<std::unique_ptr<tuner::Designer>> quasi =
        tuner::QuasiRandomDesigner::Create(st.study.spec());
    if (!quasi.ok()) return quasi.status();
    return std::shared_ptr<tuner::Designer>(*std::move(quasi));
  }
  if (st.designer == nullptr) {
    return absl::InternalError("the study has no designer");
  }
  return st.designer;
}

// Under the study's lock, in one critical section: answers `asks` with one
// run of the quick `designer` on the study as it is, and commits.
void AnswerLocked(StudyState& st, const std::vector<SuggestAsk*>& asks,
                  tuner::Designer& designer, bool deadline_fallback,
                  const Deps& deps, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  std::vector<SuggestAsk*> repeats;
  const std::vector<SuggestAsk*> takers = suggest_steps::Takers(
      suggest_steps::WithoutPendingClients(st, asks), &repeats);
  Allowance allowance;
  std::optional<absl::StatusOr<SuggestResult>> answer;
  if (!takers.empty()) {
    answer = suggest_steps::CheckRoom(st, suggest_steps::TotalCount(takers),
                                      deps, scope, &allowance);
  }
  if (answer.has_value()) {
    for (SuggestAsk* ask : takers) ask->result = *answer;
  } else if (!takers.empty()) {
    double seconds = 0;
    absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
        suggest_steps::RunDesigner(
            st.study.spec(), designer,
            suggest_steps::LiveContext(st, designer.reads()), allowance.count,
            deadline_fallback, deps.observer, &seconds);
    scope->times.designer += seconds;
    if (!suggestions.ok()) {
      for (SuggestAsk* ask : takers) ask->result = suggestions.status();
    } else {
      suggest_steps::CommitSuggestions(
          st, takers, allowance, *std::move(suggestions), seconds, deps, scope);
    }
  }
  suggest_steps::AnswerRepeats(st, takers, repeats);
}

// Under the study's lock: answers the asks that need no designer run, takes
// the snapshot for the others (returned as takers, with `*repeats` and
// `*allowance`), or returns none.
std::vector<SuggestAsk*> PrepareSnapshot(
    StudyState& st, const std::vector<SuggestAsk*>& asks, const Deps& deps,
    WriteScope* scope, std::vector<SuggestAsk*>* repeats, Allowance* allowance,
    SuggestSnapshot* snapshot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  std::vector<SuggestAsk*> takers = suggest_steps::Takers(
      suggest_steps::WithoutPendingClients(st, asks), repeats);
  if (takers.empty()) return takers;
  std::optional<absl::StatusOr<SuggestResult>> answer =
      suggest_steps::CheckRoom(st, suggest_steps::TotalCount(takers), deps,
                               scope, allowance);
  absl::StatusOr<std::shared_ptr<tuner::Designer>> designer =
      DesignerFor(st, /*deadline_fallback=*/false);
  if (!answer.has_value() && !designer.ok()) answer = designer.status();
  if (answer.has_value()) {
    for (SuggestAsk* ask : takers) ask->result = *answer;
    suggest_steps::AnswerRepeats(st, takers, *repeats);
    return {};
  }
  TakeSnapshot(st, *std::move(designer), snapshot);
  return takers;
}

// Answers `asks` with one run of the study's designer that is not quick
// (GP_BANDIT) on a snapshot, outside the study's lock. One such run at a
// time per study (the gate): a batch sees the trials of the one before as
// pending (never suggested twice), and a client that asks again gets what
// its first request created. The gate is released before the caller awaits
// the writes.
void AnswerOnSnapshot(StudyState& st, const std::vector<SuggestAsk*>& asks,
                      const Deps& deps, WriteScope* scope) {
  const auto start = std::chrono::steady_clock::now();
  absl::MutexLock gate(&st.suggest_mu);
  scope->times.lock_wait +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  SuggestSnapshot snapshot;
  std::vector<SuggestAsk*> takers, repeats;
  Allowance allowance;
  {
    LockedStudy lock(st, scope);
    takers =
        PrepareSnapshot(st, asks, deps, scope, &repeats, &allowance, &snapshot);
  }
  if (takers.empty()) return;
  double seconds = 0;
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      suggest_steps::RunDesigner(snapshot.spec, *snapshot.designer,
                                 SnapshotContext(snapshot), allowance.count,
                                 /*deadline_fallback=*/false, deps.observer,
                                 &seconds);
  scope->times.designer += seconds;
  LockedStudy lock(st, scope);
  if (!suggestions.ok()) {
    for (SuggestAsk* ask : takers) ask->result = suggestions.status();
  } else {
    suggest_steps::CommitSuggestions(
        st, takers, allowance, *std::move(suggestions), seconds, deps, scope);
  }
  suggest_steps::AnswerRepeats(st, takers, repeats);
}

}  // namespace

void StudyManager::AnswerAsks(StudyState& st,
                              const std::vector<SuggestAsk*>& asks,
                              bool deadline_fallback, WriteScope* scope) {
  const Deps deps{store_, clock_, observer_, CheckReserve()};
  {
    LockedStudy lock(st, scope);
    absl::StatusOr<std::shared_ptr<tuner::Designer>> designer =
        DesignerFor(st, deadline_fallback);
    if (!designer.ok()) {
      for (SuggestAsk* ask : asks) ask->result = designer.status();
      return;
    }
    if ((*designer)->quick()) {
      AnswerLocked(st, asks, **designer, deadline_fallback, deps, scope);
      return;
    }
  }
  AnswerOnSnapshot(st, asks, deps, scope);
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
  WriteScope scope;
  AnswerAsks(**st, asks, /*deadline_fallback=*/false, &scope);
  for (SuggestAsk* ask : asks) ask->scope = scope;
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
    AnswerAsks(st, {&ask}, /*deadline_fallback=*/false, &ask.scope);
  } else {
    // The time in the pool's queue is the wait for the study's turn.
    const auto start = std::chrono::steady_clock::now();
    const bool answered = suggest_pool_->Submit(
        st.id, &ask, absl::Now() + suggest_queue_deadline_);
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (answered) {
      // The batch ran while Submit waited; its lock waits count in.
      waited -= ask.scope.times.designer + ask.scope.times.append +
                ask.scope.times.lock_wait;
    } else {
      // Still queued at the deadline: quasi-random points now.
      AnswerAsks(st, {&ask}, /*deadline_fallback=*/true, &ask.scope);
    }
    ask.scope.times.lock_wait += waited;
  }
  return Finish(AwaitAndReport("SuggestTrials", ask.scope, /*designs=*/true),
                std::move(ask.result));
}

}  // namespace cairn
