// Pieces shared by the sequence-based designers (random, quasi-random, grid).
// Not part of the tuner's public API.
#ifndef CAIRN_TUNER_DESIGNER_UTIL_H_
#define CAIRN_TUNER_DESIGNER_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tuner/designer.h"
#include "tuner/search_space.h"

namespace cairn::tuner::internal {

// Position of the study's next point in a designer's sequence: the number of
// trials ever created, i.e. the largest trial id (ids start at 1 and are never
// reused, so deleted trials still count) or the number of trials if larger,
// from `trials` or, when it is left empty, from trial_count and
// last_trial_id. A pure function of the context, so a restarted cairnd
// continues the sequence where it stopped.
uint64_t NextPointIndex(const DesignerContext& context);

// Canonical keys (SearchSpace::CanonicalKey) of the pending trials
// (REQUESTED, ACTIVE, STOPPING) or of every trial.
absl::flat_hash_set<std::string> PendingTrialKeys(
    const DesignerContext& context);
absl::flat_hash_set<std::string> AllTrialKeys(const DesignerContext& context);

// Unit point number `index` of a sequence; `attempt` > 0 asks for a
// replacement after the previous attempt collided with a pending trial.
using PointFn =
    std::function<std::vector<double>(uint64_t index, uint64_t attempt)>;

// Draws up to `count` suggestions: slot i uses point NextPointIndex + i,
// redrawn (attempt 1, 2, ...) while it equals a pending trial or an earlier
// suggestion of the batch. A slot that collides kMaxAttempts times means the
// space is (nearly) exhausted by pending trials: the batch ends there.
inline constexpr int kMaxAttempts = 100;
std::vector<Suggestion> SuggestDistinct(const SearchSpace& space,
                                        const DesignerContext& context,
                                        int count, const PointFn& point);

}  // namespace cairn::tuner::internal

#endif  // CAIRN_TUNER_DESIGNER_UTIL_H_
