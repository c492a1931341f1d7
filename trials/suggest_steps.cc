// The steps of SuggestTrials under a study's lock: see suggest_steps.h.
#include "trials/suggest_steps.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "api/study_defaults.h"
#include "trials/trial_summary.h"
#include "tuner/gp/suggestion_kinds.h"
#include "tuner/search_space.h"
#include "util/time_proto.h"

namespace cairn::suggest_steps {

using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::Deps;

namespace {

// Trial metadata of a point suggested again (repeat_points_when_exhausted).
constexpr char kRepeated[] = "repeated_point";

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

// How many of `suggestions` the designer's deadline fallback produced.
int CountDeadlineFallbacks(const std::vector<tuner::Suggestion>& suggestions) {
  int n = 0;
  for (const tuner::Suggestion& s : suggestions) {
    auto kind = s.metadata.find("suggestion_kind");
    if (kind != s.metadata.end() && kind->second == gp::kDeadlineKind) ++n;
  }
  return n;
}

// StudySpec.repeat_points_when_exhausted: fills `*suggestions` up to
// `count` with points already suggested when the designer returned fewer.
// The distinct points of the study's trials and then of the designer's
// suggestions take turns in that order, the turn going on after the
// repeats made so far (trials marked kRepeated), so a client asking one at
// a time cycles through them. Does nothing for other studies.
void FillWithRepeats(const StudyState& st, int64_t count,
                     std::vector<tuner::Suggestion>* suggestions)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (!st.study.spec().repeat_points_when_exhausted() ||
      static_cast<int64_t>(suggestions->size()) >= count) {
    return;
  }
  std::vector<std::vector<cairn::v1::Parameter>> points;
  absl::flat_hash_set<std::string> keys;
  int64_t repeats = 0;
  for (const Trial* t : st.trials.InIdOrder()) {
    if (t->metadata().contains(kRepeated)) ++repeats;
    if (keys.insert(tuner::SearchSpace::CanonicalKey(t->parameters())).second) {
      points.emplace_back(t->parameters().begin(), t->parameters().end());
    }
  }
  for (const tuner::Suggestion& s : *suggestions) {
    if (keys.insert(tuner::SearchSpace::CanonicalKey(s.parameters)).second) {
      points.push_back(s.parameters);
    }
  }
  if (points.empty()) return;
  for (int64_t turn = repeats;
       static_cast<int64_t>(suggestions->size()) < count; ++turn) {
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

// Client i of `takers`, once per trial it asked for, up to `n` trials.
std::vector<std::string> Owners(const std::vector<SuggestAsk*>& takers,
                                size_t n) {
  std::vector<std::string> owners;
  for (const SuggestAsk* t : takers) {
    for (int k = 0; k < t->count && owners.size() < n; ++k) {
      owners.push_back(t->client_id);
    }
  }
  return owners;
}

}  // namespace

int64_t TotalCount(const std::vector<SuggestAsk*>& asks) {
  int64_t n = 0;
  for (const SuggestAsk* ask : asks) n += ask->count;
  return n;
}

std::vector<SuggestAsk*> WithoutPendingClients(
    const StudyState& st, const std::vector<SuggestAsk*>& asks) {
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

void AnswerRepeats(const StudyState& st, const std::vector<SuggestAsk*>& takers,
                   const std::vector<SuggestAsk*>& repeats) {
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

std::optional<absl::StatusOr<SuggestResult>> CheckRoom(StudyState& st,
                                                       int64_t count,
                                                       const Deps& deps,
                                                       WriteScope* scope,
                                                       Allowance* allowance) {
  if (st.study.state() != Study::ACTIVE) {
    return FinishSuggest(st, deps.store, scope, {}, "");
  }
  std::string message;
  const int64_t n = AllowedTrials(st, count, &message);
  if (n == 0) return FinishSuggest(st, deps.store, scope, {}, message);
  if (!deps.new_trials.ok()) return deps.new_trials;
  allowance->count = n;
  allowance->message = std::move(message);
  return std::nullopt;
}

tuner::DesignerContext LiveContext(const StudyState& st,
                                   tuner::Designer::Reads reads) {
  tuner::DesignerContext context;
  context.spec = &st.study.spec();
  context.pending = st.trials.Pending();
  const std::vector<const Trial*>& all = st.trials.InIdOrder();
  context.trial_count = static_cast<int64_t>(all.size());
  context.last_trial_id = all.empty() ? 0 : all.back()->id();
  if (reads == tuner::Designer::Reads::kAllTrials) context.trials = all;
  return context;
}

absl::StatusOr<std::vector<tuner::Suggestion>> RunDesigner(
    const StudySpec& spec, tuner::Designer& designer,
    const tuner::DesignerContext& context, int64_t count,
    bool deadline_fallback, StudyObserver* observer, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<tuner::Suggestion>> suggestions =
      designer.Suggest(context, static_cast<int>(count));
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
    const std::string algorithm =
        StudySpec::Algorithm_Name(api::EffectiveAlgorithm(spec.algorithm()));
    observer->OnSuggest(algorithm, *seconds,
                        static_cast<int>(suggestions->size()));
    observer->OnSuggestionHistory(
        algorithm,
        static_cast<int64_t>(context.trials.empty() ? context.pending.size()
                                                    : context.trials.size()));
    const int fallbacks = CountDeadlineFallbacks(*suggestions);
    if (fallbacks > 0) observer->OnDeadlineFallbacks(algorithm, fallbacks);
  }
  return suggestions;
}

void CommitSuggestions(StudyState& st, const std::vector<SuggestAsk*>& asked,
                       const Allowance& allowance,
                       std::vector<tuner::Suggestion> suggestions,
                       double seconds, const Deps& deps, WriteScope* scope) {
  if (st.deleted) {
    for (SuggestAsk* ask : asked) {
      ask->result = absl::NotFoundError(
          absl::StrCat("study ", ask->parent, " not found"));
    }
    return;
  }
  const std::vector<SuggestAsk*> takers = WithoutPendingClients(st, asked);
  if (st.study.state() != Study::ACTIVE) {
    HandOut(takers, {}, FinishSuggest(st, deps.store, scope, {}, ""));
    return;
  }
  FillWithRepeats(st, allowance.count, &suggestions);
  std::string message = allowance.message;
  if (static_cast<int64_t>(suggestions.size()) < allowance.count) {
    st.exhausted = true;
    message = "search space exhausted";
  }
  const int64_t n = AllowedTrials(
      st, std::min(allowance.count, TotalCount(takers)), &message);
  if (static_cast<int64_t>(suggestions.size()) > n) suggestions.resize(n);
  std::vector<Trial> created =
      SuggestedTrials(st, suggestions, Owners(takers, suggestions.size()),
                      deps.clock->Now(), seconds);
  TrialSummary after =
      SummaryAfterPut(st.study.spec(), st.trials, st.summary, created);
  absl::StatusOr<std::shared_ptr<PendingWrite>> write = Timed(
      &scope->times.append,
      [&] { return deps.store->EnqueuePutTrials(st.id, created, &after); });
  if (absl::Status s = Queued(std::move(write), &st.last_write, scope);
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

}  // namespace cairn::suggest_steps
