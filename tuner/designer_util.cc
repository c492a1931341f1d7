// Pieces shared by the sequence-based designers.
#include "tuner/designer_util.h"

#include <algorithm>

namespace cairn::tuner::internal {

uint64_t NextPointIndex(const DesignerContext& context) {
  // Trials come in id order: the last one has the largest id.
  int64_t next =
      std::max<int64_t>({static_cast<int64_t>(context.trials.size()),
                         context.trial_count, context.last_trial_id, 0});
  if (!context.trials.empty()) {
    next = std::max<int64_t>(next, context.trials.back()->id());
  }
  return static_cast<uint64_t>(next);
}

absl::flat_hash_set<std::string> PendingTrialKeys(
    const DesignerContext& context) {
  absl::flat_hash_set<std::string> keys;
  for (const cairn::v1::Trial* t : context.pending) {
    keys.insert(SearchSpace::CanonicalKey(t->parameters()));
  }
  return keys;
}

absl::flat_hash_set<std::string> AllTrialKeys(const DesignerContext& context) {
  absl::flat_hash_set<std::string> keys;
  for (const cairn::v1::Trial* t : context.trials) {
    keys.insert(SearchSpace::CanonicalKey(t->parameters()));
  }
  return keys;
}

std::vector<Suggestion> SuggestDistinct(const SearchSpace& space,
                                        const DesignerContext& context,
                                        int count, const PointFn& point) {
  std::vector<Suggestion> out;
  absl::flat_hash_set<std::string> taken = PendingTrialKeys(context);
  const uint64_t base = NextPointIndex(context);
  for (int i = 0; i < count; ++i) {
    bool found = false;
    for (int attempt = 0; attempt < kMaxAttempts && !found; ++attempt) {
      const Assignment a = space.AssignmentFromUnit(point(base + i, attempt));
      std::vector<cairn::v1::Parameter> params = space.ToParameters(a);
      if (taken.insert(SearchSpace::CanonicalKey(params)).second) {
        out.push_back(Suggestion{std::move(params), {}});
        found = true;
      }
    }
    if (!found) break;
  }
  return out;
}

}  // namespace cairn::tuner::internal
