// A regression forest on points of the unit cube [0, 1]^d: the model that
// parameter importance (parameter_importance.h) decomposes. Each tree is
// fitted on a bootstrap sample; each node splits one coordinate at the
// midpoint between two sample values, choosing over every coordinate the
// split that lowers the squared error most (as Optuna's fANOVA forest, so
// that with few parameters no split is forced onto an irrelevant one).
//
// Fitting is deterministic for a given seed. A RandomForest is immutable
// after Fit and safe for concurrent use.
#ifndef CAIRN_TUNER_RANDOM_FOREST_H_
#define CAIRN_TUNER_RANDOM_FOREST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn::tuner {

struct ForestOptions {
  int num_trees = 64;        // Trees in the forest.
  int max_depth = 16;        // Deepest split level.
  int min_samples_leaf = 1;  // A split leaves at least this many per side.
  uint64_t seed = 1;         // Bootstrap sampling.
};

// One node of a tree; a leaf has feature -1.
struct TreeNode {
  int feature = -1;
  double threshold = 0.0;  // Left when x[feature] < threshold.
  int left = -1;           // Indices into the tree's node vector.
  int right = -1;
  double value = 0.0;  // Mean of the node's samples (a leaf's prediction).
};

// Nodes of one tree, the root first.
using Tree = std::vector<TreeNode>;

class RandomForest {
 public:
  // Fits the forest to samples x[k] (each of `dims` coordinates in [0, 1])
  // with targets y[k]. InvalidArgument when x and y differ in length, a
  // sample has another length than `dims`, a value is not finite, or there
  // are fewer than 2 samples; options out of range (num_trees or
  // min_samples_leaf < 1, max_depth < 0) too.
  static absl::StatusOr<RandomForest> Fit(
      const std::vector<std::vector<double>>& x, const std::vector<double>& y,
      int dims, const ForestOptions& options = {});

  // The mean of the trees' predictions at `point` (dims() coordinates,
  // REQUIRES).
  double Predict(const std::vector<double>& point) const;

  int dims() const { return dims_; }
  const std::vector<Tree>& trees() const { return trees_; }

 private:
  RandomForest(int dims, std::vector<Tree> trees)
      : dims_(dims), trees_(std::move(trees)) {}

  int dims_;
  std::vector<Tree> trees_;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_RANDOM_FOREST_H_
