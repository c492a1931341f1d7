// The steps of SuggestTrials that run under a study's lock, shared by the
// two ways a suggestion runs (trials/study_manager_suggest.cc): a quick
// designer runs under the lock on the study as it is; any other on a
// snapshot, outside the lock. Internal to trials/.
#ifndef CAIRN_TRIALS_SUGGEST_STEPS_H_
#define CAIRN_TRIALS_SUGGEST_STEPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "trials/observer.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "trials/suggest_pool.h"
#include "trials/suggest_result.h"
#include "tuner/designer.h"

namespace cairn::suggest_steps {

// How many new trials the limits allow a designer run, and the limit that
// cut the count, if one did.
struct Allowance {
  int64_t count = 0;
  std::string message;
};

// The sum of the asks' counts.
int64_t TotalCount(const std::vector<SuggestAsk*>& asks);

// Answers the asks whose client has pending trials (Vizier: asking again
// returns them) and returns the others.
std::vector<SuggestAsk*> WithoutPendingClients(
    const StudyState& st, const std::vector<SuggestAsk*>& asks)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

// Splits `asks` into those that take new trials and `*repeats`: asks whose
// non-empty client_id an earlier taker has (they get its trials once the
// batch is committed, see AnswerRepeats).
std::vector<SuggestAsk*> Takers(const std::vector<SuggestAsk*>& asks,
                                std::vector<SuggestAsk*>* repeats);

// After a commit: each repeat gets the pending trials of its client, or its
// taker's answer when that got none.
void AnswerRepeats(const StudyState& st, const std::vector<SuggestAsk*>& takers,
                   const std::vector<SuggestAsk*>& repeats)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

// Answers `count` new trials when no designer run is needed (a study that
// is not ACTIVE, no room under max_trials / max_parallel_trials, the disk
// reserve) by returning the answer; otherwise fills `*allowance` and
// returns nullopt.
std::optional<absl::StatusOr<SuggestResult>> CheckRoom(
    StudyState& st, int64_t count, const study_manager_internal::Deps& deps,
    WriteScope* scope, Allowance* allowance)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

// The designer's view of the study as it is, copying no trial: the pending
// trials and the counts, and every trial only when it `reads` them all.
// Valid while st.mu stays held.
tuner::DesignerContext LiveContext(const StudyState& st,
                                   tuner::Designer::Reads reads)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

// Asks `designer` for `count` suggestions on `context`, timing it into
// `*seconds` and reporting it (and the trials it read) to `observer` (may
// be null). `deadline_fallback`: `designer` answers in place of the study's
// own, whose deadline passed; its trials say so (gp::kDeadlineKind).
absl::StatusOr<std::vector<tuner::Suggestion>> RunDesigner(
    const cairn::v1::StudySpec& spec, tuner::Designer& designer,
    const tuner::DesignerContext& context, int64_t count,
    bool deadline_fallback, StudyObserver* observer, double* seconds);

// Adds the designer's `suggestions` for `asked` to the study as it is now
// and answers the takers among them. Other calls may have changed the study
// since the designer was given it, so the checks run again: a study that
// was deleted or stopped takes nothing, a client that got pending trials
// (a manual trial with its client_id) gets those, and the limits apply to
// the current counts (suggestions beyond them are dropped). New ids follow
// the current max_trial_id. Fewer suggestions than allowance.count means
// the space is exhausted; repeat_points_when_exhausted then fills them up
// with points already suggested.
void CommitSuggestions(StudyState& st, const std::vector<SuggestAsk*>& asked,
                       const Allowance& allowance,
                       std::vector<tuner::Suggestion> suggestions,
                       double seconds, const study_manager_internal::Deps& deps,
                       WriteScope* scope) ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

}  // namespace cairn::suggest_steps

#endif  // CAIRN_TRIALS_SUGGEST_STEPS_H_
