// QUASI_RANDOM_SEARCH: a scrambled Halton sequence over the flattened space.
#ifndef CAIRN_TUNER_QUASI_RANDOM_DESIGNER_H_
#define CAIRN_TUNER_QUASI_RANDOM_DESIGNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "tuner/designer.h"
#include "tuner/search_space.h"

namespace cairn::tuner {

// Point n (n = trials created so far + index in the batch) is point n of a
// Halton sequence with one prime base per flattened parameter (2, 3, 5, ...
// in flat order), decoded through the search space. Each digit position k of
// dimension j is scrambled by a random affine permutation
// d -> (a * d + c) mod b (a != 0) drawn from hash(spec.seed, j, k), which
// keeps the low discrepancy, removes the correlations plain Halton shows
// between high dimensions and makes the sequence differ per seed. The
// sequence is a pure function of (seed, n): it does not depend on batch sizes
// and continues unchanged after a restart. A point equal to a pending trial
// or an earlier point of the batch is replaced by point n + attempt * 2^40.
// Not thread-safe (see Designer).
class QuasiRandomDesigner final : public Designer {
 public:
  // Uses spec.parameters and spec.seed; later Suggest calls must pass a
  // context for the same spec. Returns InvalidArgument for an invalid space.
  static absl::StatusOr<std::unique_ptr<Designer>> Create(
      const cairn::v1::StudySpec& spec);

  absl::StatusOr<std::vector<Suggestion>> Suggest(
      const DesignerContext& context, int count) override;
  Reads reads() const override { return Reads::kPending; }
  bool quick() const override { return true; }

  // Unit point number `index` of the scrambled sequence, in [0, 1)^d.
  std::vector<double> Point(uint64_t index) const;

 private:
  // One scrambled digit position of one dimension.
  struct DigitScramble {
    uint64_t a;  // In [1, base).
    uint64_t c;  // In [0, base).
  };
  struct Dimension {
    uint64_t base;
    std::vector<DigitScramble> digits;  // Enough for 53 bits.
  };

  QuasiRandomDesigner(SearchSpace space, int64_t seed);

  const SearchSpace space_;
  std::vector<Dimension> dims_;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_QUASI_RANDOM_DESIGNER_H_
