// RANDOM_SEARCH designer.
#include "tuner/random_designer.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tuner/designer_util.h"
#include "tuner/internal.h"

namespace cairn::tuner {

absl::StatusOr<std::unique_ptr<Designer>> RandomDesigner::Create(
    const cairn::v1::StudySpec& spec) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  return std::unique_ptr<Designer>(
      new RandomDesigner(*std::move(space), spec.seed()));
}

std::vector<double> RandomDesigner::Point(uint64_t index,
                                          uint64_t attempt) const {
  // Domain tag "rand" keeps this stream apart from other seeded uses.
  internal::Rng rng(internal::HashSeed(static_cast<uint64_t>(seed_), index,
                                       attempt, 0x72616e64));
  std::vector<double> unit(space_.size());
  for (double& u : unit) u = rng.Uniform();
  return unit;
}

absl::StatusOr<std::vector<Suggestion>> RandomDesigner::Suggest(
    const DesignerContext& context, int count) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("count ", count, " must be >= 1"));
  }
  return internal::SuggestDistinct(space_, context, count,
                                   [this](uint64_t index, uint64_t attempt) {
                                     return Point(index, attempt);
                                   });
}

}  // namespace cairn::tuner
