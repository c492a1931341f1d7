// RANDOM_SEARCH: independent uniform points in the scaled unit cube.
#ifndef CAIRN_TUNER_RANDOM_DESIGNER_H_
#define CAIRN_TUNER_RANDOM_DESIGNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "tuner/designer.h"
#include "tuner/search_space.h"

namespace cairn::tuner {

// Every coordinate of point n (n = trials created so far + index in the
// batch) is uniform in [0, 1), decoded through the search space, so log
// scales are log-uniform, every integer and DISCRETE cell is hit in proportion
// to its share of the scaled range and every category equally often; inactive
// conditional children are left out. Point n is drawn from a generator seeded
// by hash(spec.seed, n, attempt), so the sequence does not depend on batch
// sizes and continues unchanged after a restart. A point equal to a pending
// trial or an earlier point of the batch is redrawn (see SuggestDistinct).
// Not thread-safe (see Designer).
class RandomDesigner final : public Designer {
 public:
  // Uses spec.parameters and spec.seed; later Suggest calls must pass a
  // context for the same spec. Returns InvalidArgument for an invalid space.
  static absl::StatusOr<std::unique_ptr<Designer>> Create(
      const cairn::v1::StudySpec& spec);

  absl::StatusOr<std::vector<Suggestion>> Suggest(
      const DesignerContext& context, int count) override;
  Reads reads() const override { return Reads::kPending; }
  bool quick() const override { return true; }

  // Unit point number `index` (attempt 0 is the first draw).
  std::vector<double> Point(uint64_t index, uint64_t attempt) const;

 private:
  RandomDesigner(SearchSpace space, int64_t seed)
      : space_(std::move(space)), seed_(seed) {}

  const SearchSpace space_;
  const int64_t seed_;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_RANDOM_DESIGNER_H_
