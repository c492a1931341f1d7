// The GP bandit's view of a search space: a unit cube of continuous
// dimensions (optionally snapped to a grid of allowed values, for INTEGER and
// DISCRETE parameters), categorical dimensions and conditional activity.
#ifndef CAIRN_TUNER_GP_MIXED_SPACE_H_
#define CAIRN_TUNER_GP_MIXED_SPACE_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"
#include "absl/status/status.h"

namespace cairn::gp {

// A point is an Eigen::VectorXd with one entry per dimension: a continuous
// dimension holds a value in [0, 1]; a categorical one holds the category
// index (0 .. num_categories - 1) as a double. An inactive dimension holds its
// fixed inactive value (0.5, or num_categories for a categorical), so inactive
// children never contribute spurious distances to the kernel.
struct Dimension {
  enum class Kind { kContinuous, kCategorical };
  Kind kind = Kind::kContinuous;
  // kContinuous only: sorted allowed values in [0, 1] (INTEGER, DISCRETE).
  // Empty means any value in [0, 1].
  std::vector<double> grid;
  // kCategorical only: number of categories (>= 1).
  int num_categories = 0;
  // Conditional activity: -1 for an always-active dimension; otherwise the
  // index of the parent dimension (smaller than this one's index) and the
  // parent's encoded values (category index or grid value) that activate it.
  int parent = -1;
  std::vector<double> parent_values;
};

// Inactive value of a continuous dimension.
inline constexpr double kInactiveContinuous = 0.5;

// Deterministic 64-bit generator (splitmix64 seeding of xoshiro256**) with
// portable uniform and normal draws, so suggestions are bit-identical across
// standard libraries for a given seed.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, 1).
  double Uniform();
  // Standard normal (Box-Muller).
  double Normal();
  // Uniform integer in [0, n), n >= 1.
  int UniformInt(int n);

 private:
  uint64_t s_[4];
};

// Mixes several values into one seed.
uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c = 0);

// An immutable description of the space. Thread-compatible.
class MixedSpace {
 public:
  MixedSpace() = default;
  // Returns InvalidArgument naming the dimension for a malformed description
  // (unsorted grid, values outside [0, 1], num_categories < 1, parent index
  // not smaller than the child's, parent_values empty).
  static absl::Status Validate(const std::vector<Dimension>& dims);
  // REQUIRES: Validate(dims).ok().
  explicit MixedSpace(std::vector<Dimension> dims);

  int size() const { return static_cast<int>(dims_.size()); }
  const Dimension& dim(int d) const { return dims_[d]; }
  bool IsCategorical(int d) const {
    return dims_[d].kind == Dimension::Kind::kCategorical;
  }

  // Whether dimension d is active in the (canonical) point x.
  bool IsActive(const Eigen::VectorXd& x, int d) const;

  // Clamps continuous values to [0, 1] and snaps them to the grid, rounds
  // categories, and sets inactive dimensions to their inactive value. Cheap;
  // idempotent.
  void Canonicalize(Eigen::Ref<Eigen::VectorXd> x) const;

  // A uniformly random canonical point.
  Eigen::VectorXd Sample(Rng& rng) const;

  // The index-th point of a scrambled Halton sequence (a random shift per
  // dimension drawn from `seed`), canonicalized. Index 0 is the center of
  // the space (continuous dims at 0.5 snapped, first category).
  Eigen::VectorXd Halton(int64_t index, uint64_t seed) const;

 private:
  std::vector<Dimension> dims_;
};

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_MIXED_SPACE_H_
