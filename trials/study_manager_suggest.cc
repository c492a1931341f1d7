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
#include "trials/trial_summary.h"
#include "tuner/designer.h"
#include "tuner/gp/suggestion_kinds.h"
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

// Under the study's lock: answers the call when it needs no designer run
// (the client's pending trials, a study that is not ACTIVE, no room, the
// disk reserve); otherwise fills `*snapshot` and returns nullopt.
std::optional<absl::StatusOr<SuggestResult>> PrepareSuggest(
    StudyState& st, int count, const std::string& client_id, const Deps& deps,
    WriteScope* scope, SuggestSnapshot* snapshot)
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

// Asks the snapshot's designer for its suggestions (no lock held), timing it
// into `*seconds` and reporting it to `observer` (may be null).
absl::StatusOr<std::vector<tuner::Suggestion>> RunDesigner(
    const SuggestSnapshot& snapshot, StudyObserver* observer, double* seconds) {
  tuner::DesignerContext context;
  context.spec = &snapshot.spec;
  context.trials.reserve(snapshot.trials.size());
  for (const Trial& t : snapshot.trials) context.trials.push_back(&t);
  context.pending = tuner::PendingAmong(context.trials);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      snapshot.designer->Suggest(context, static_cast<int>(snapshot.count));
  *seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!suggestions.ok()) return suggestions.status();
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
    t.set_name(api::TrialResourceName(st.id, t.id()));
    t.set_state(Trial::ACTIVE);
    t.set_client_id(client_id);
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

// Under the study's lock again, after the designer ran: adds its
// suggestions to the study as it is now. Other calls may have changed it
// meanwhile, so the checks of PrepareSuggest run again: a study that was
// deleted or stopped takes nothing, a client that got pending trials (a
// manual trial with its client_id) gets those, and the limits are applied to
// the current counts (suggestions beyond them are dropped). New ids follow
// the current max_trial_id. `snapshot.count`: what the designer was asked
// for (fewer back means the space is exhausted).
absl::StatusOr<SuggestResult> CommitSuggestions(
    StudyState& st, const std::string& parent, const std::string& client_id,
    const SuggestSnapshot& snapshot, std::vector<tuner::Suggestion> suggestions,
    double seconds, const Deps& deps, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  const int64_t asked = snapshot.count;
  if (st.deleted) {
    return absl::NotFoundError(absl::StrCat("study ", parent, " not found"));
  }
  SuggestResult result;
  if (ClientPendingTrials(st, client_id, &result)) return result;
  if (st.study.state() != Study::ACTIVE) {
    return FinishSuggest(st, deps.store, scope, std::move(result), "");
  }
  std::string message = snapshot.message;
  if (static_cast<int64_t>(suggestions.size()) < asked) {
    st.exhausted = true;
    message = "search space exhausted";
  }
  const int64_t n = AllowedTrials(st, asked, &message);
  if (static_cast<int64_t>(suggestions.size()) > n) suggestions.resize(n);
  std::vector<Trial> created =
      SuggestedTrials(st, suggestions, client_id, deps.clock->Now(), seconds);
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

}  // namespace

absl::StatusOr<SuggestResult> StudyManager::SuggestTrials(
    const std::string& parent, int count, const std::string& client_id) {
  if (count < 1 || count > cairn::api::kMaxSuggestionCount) {
    return absl::InvalidArgumentError(
        absl::StrCat("suggestion_count: ", count, " must be between 1 and ",
                     cairn::api::kMaxSuggestionCount));
  }
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  const absl::Status reserve = CheckReserve();
  auto state = FindStudyByName(parent, "parent");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  const Deps deps{store_, clock_, observer_, reserve};
  WriteScope scope;
  absl::StatusOr<SuggestResult> result;
  {
    // One suggestion at a time per study: a request waiting here sees the
    // trials of the one before it (pending, so never suggested twice), and
    // a client that asks again gets what its first request created.
    absl::MutexLock gate(&st.suggest_mu);
    SuggestSnapshot snapshot;
    std::optional<absl::StatusOr<SuggestResult>> answer;
    {
      LockedStudy lock(st, &scope);
      answer = PrepareSuggest(st, count, client_id, deps, &scope, &snapshot);
    }
    if (answer.has_value()) {
      result = *std::move(answer);
    } else {
      double seconds = 0;
      absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
          RunDesigner(snapshot, observer_, &seconds);
      if (!suggestions.ok()) return suggestions.status();
      FillWithRepeats(snapshot, &*suggestions);
      LockedStudy lock(st, &scope);
      result =
          CommitSuggestions(st, parent, client_id, snapshot,
                            *std::move(suggestions), seconds, deps, &scope);
    }
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
