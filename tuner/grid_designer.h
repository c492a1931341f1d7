// GRID_SEARCH: every point of a finite grid, each at most once.
#ifndef CAIRN_TUNER_GRID_DESIGNER_H_
#define CAIRN_TUNER_GRID_DESIGNER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "tuner/designer.h"
#include "tuner/search_space.h"

namespace cairn::tuner {

// The grid values of each parameter:
// - DOUBLE: grid_resolution points (0 means 10) evenly spaced in the scaled
//   unit space, both bounds included (a single point: the scaled center);
// - INTEGER: every integer of the range when grid_resolution is 0 and the
//   range holds at most kMaxFullIntegerGrid integers, or when it holds no
//   more than grid_resolution; otherwise grid_resolution (0 means 10) evenly
//   spaced (scaled) points rounded to integers. Parent values that activate a
//   conditional child are always included;
// - DISCRETE and CATEGORICAL: every value.
// With conditions, only valid combinations are grid points: a child's values
// multiply only the parent values that activate it.
//
// Order: lexicographic in flat parameter order (the first parameter varies
// slowest, the last fastest), each parameter's values in increasing order
// (categories in spec order). The order ignores the seed: a grid is
// predictable, and a user who wants a random order uses RANDOM_SEARCH.
//
// Suggest walks the grid from the start and returns the first points that no
// trial of the study (any state, manual trials included) has, so a restarted
// cairnd continues where it stopped and no point is ever repeated; once every
// point is taken it returns fewer than asked (none at the end). Cost per call:
// O((trials + count) * parameters). Grids larger than 2^64 points are
// effectively infinite: counts saturate. Not thread-safe (see Designer).
class GridDesigner final : public Designer {
 public:
  // INTEGER ranges up to this size are enumerated fully by default.
  static constexpr double kMaxFullIntegerGrid = 1000;
  // Points of a DOUBLE (or large INTEGER) with grid_resolution 0.
  static constexpr int kDefaultResolution = 10;

  // Uses spec.parameters; later Suggest calls must pass a context for the same
  // spec. Returns InvalidArgument for an invalid space.
  static absl::StatusOr<std::unique_ptr<GridDesigner>> Create(
      const cairn::v1::StudySpec& spec);

  absl::StatusOr<std::vector<Suggestion>> Suggest(
      const DesignerContext& context, int count) override;
  Reads reads() const override { return Reads::kAllTrials; }
  bool quick() const override { return true; }

  // Number of grid points (UINT64_MAX if it does not fit).
  uint64_t size() const { return total_; }
  // Grid point number `index` in the order above. REQUIRES: index < size().
  Assignment PointAt(uint64_t index) const;
  // The grid values (native) of flattened parameter i.
  const std::vector<double>& values(int i) const { return values_[i]; }

 private:
  explicit GridDesigner(SearchSpace space);
  void Unrank(const std::vector<int>& group, uint64_t index,
              Assignment* a) const;

  const SearchSpace space_;
  // Per flattened parameter: its grid values; for each value the children it
  // activates, and the number of sub-grid points under that value.
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<std::vector<int>>> children_at_;
  std::vector<std::vector<uint64_t>> weight_;
  // Sum of weight_[i]: the grid points of parameter i's subtree.
  std::vector<uint64_t> count_;
  std::vector<int> roots_;
  uint64_t total_ = 0;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_GRID_DESIGNER_H_
