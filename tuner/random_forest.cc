// See random_forest.h.
#include "tuner/random_forest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cairn::tuner {
namespace {

struct Split {
  int feature = -1;
  double threshold = 0.0;
  double gain = 0.0;
};

// Grows one tree on the samples `idx` index (a bootstrap sample).
class TreeBuilder {
 public:
  TreeBuilder(const std::vector<std::vector<double>>& x,
              const std::vector<double>& y, int dims,
              const ForestOptions& options)
      : x_(x), y_(y), dims_(dims), options_(options) {}

  Tree Build(const std::vector<int>& idx) {
    Grow(idx, 0);
    return std::move(tree_);
  }

 private:
  // Appends the subtree of `idx`; returns its root's index.
  int Grow(const std::vector<int>& idx, int depth) {
    const int node = static_cast<int>(tree_.size());
    tree_.emplace_back();
    double sum = 0.0;
    for (int k : idx) sum += y_[k];
    tree_[node].value = sum / idx.size();
    const int min_leaf = options_.min_samples_leaf;
    if (depth >= options_.max_depth ||
        idx.size() < 2 * static_cast<size_t>(min_leaf)) {
      return node;
    }
    const Split split = BestSplit(idx);
    if (split.feature < 0) return node;
    std::vector<int> left, right;
    for (int k : idx) {
      (x_[k][split.feature] < split.threshold ? left : right).push_back(k);
    }
    const int l = Grow(left, depth + 1);
    const int r = Grow(right, depth + 1);
    tree_[node].feature = split.feature;
    tree_[node].threshold = split.threshold;
    tree_[node].left = l;
    tree_[node].right = r;
    return node;
  }

  // The best split over every coordinate (ties to the lowest index).
  Split BestSplit(const std::vector<int>& idx) const {
    Split best;
    for (int f = 0; f < dims_; ++f) {
      const Split s = BestSplitOn(idx, f);
      if (s.feature >= 0 && s.gain > best.gain) best = s;
    }
    return best;
  }

  // The threshold on `feature` that lowers the squared error most, or
  // feature -1 when no split helps.
  Split BestSplitOn(const std::vector<int>& idx, int feature) const {
    std::vector<std::pair<double, double>> v;
    v.reserve(idx.size());
    double total = 0.0, squares = 0.0;
    for (int k : idx) {
      v.emplace_back(x_[k][feature], y_[k]);
      total += y_[k];
      squares += y_[k] * y_[k];
    }
    std::sort(v.begin(), v.end());
    const int n = static_cast<int>(v.size());
    const int min_leaf = options_.min_samples_leaf;
    // Gains below this are rounding noise of a constant target.
    const double noise = 1e-12 * (squares + 1.0);
    Split best;
    best.gain = noise;
    double left_sum = 0.0;
    for (int i = 0; i + 1 < n; ++i) {
      left_sum += v[i].second;
      const int nl = i + 1, nr = n - nl;
      if (nl < min_leaf || nr < min_leaf || v[i].first == v[i + 1].first) {
        continue;
      }
      const double right_sum = total - left_sum;
      const double gain = left_sum * left_sum / nl +
                          right_sum * right_sum / nr - total * total / n;
      if (gain > best.gain) {
        best = {feature, (v[i].first + v[i + 1].first) / 2, gain};
      }
    }
    return best;
  }

  const std::vector<std::vector<double>>& x_;
  const std::vector<double>& y_;
  const int dims_;
  const ForestOptions& options_;
  Tree tree_;
};

absl::Status CheckInput(const std::vector<std::vector<double>>& x,
                        const std::vector<double>& y, int dims,
                        const ForestOptions& options) {
  if (options.num_trees < 1 || options.min_samples_leaf < 1 ||
      options.max_depth < 0 || dims < 1) {
    return absl::InvalidArgumentError(
        "forest options: num_trees, min_samples_leaf and dims must be >= 1 "
        "and max_depth >= 0");
  }
  if (x.size() != y.size() || x.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("forest: need at least 2 samples with one target each; "
                     "got ",
                     x.size(), " samples and ", y.size(), " targets"));
  }
  for (size_t k = 0; k < x.size(); ++k) {
    if (static_cast<int>(x[k].size()) != dims) {
      return absl::InvalidArgumentError(
          absl::StrCat("forest: sample ", k, " has ", x[k].size(),
                       " coordinates, not ", dims));
    }
    if (!std::isfinite(y[k]) ||
        !std::all_of(x[k].begin(), x[k].end(),
                     [](double v) { return std::isfinite(v); })) {
      return absl::InvalidArgumentError(
          absl::StrCat("forest: sample ", k, " is not finite"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RandomForest> RandomForest::Fit(
    const std::vector<std::vector<double>>& x, const std::vector<double>& y,
    int dims, const ForestOptions& options) {
  if (absl::Status s = CheckInput(x, y, dims, options); !s.ok()) return s;
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(x.size()) - 1);
  std::vector<Tree> trees;
  trees.reserve(options.num_trees);
  for (int t = 0; t < options.num_trees; ++t) {
    std::vector<int> sample(x.size());
    for (int& k : sample) k = pick(rng);
    trees.push_back(TreeBuilder(x, y, dims, options).Build(sample));
  }
  return RandomForest(dims, std::move(trees));
}

double RandomForest::Predict(const std::vector<double>& point) const {
  double sum = 0.0;
  for (const Tree& tree : trees_) {
    int node = 0;
    while (tree[node].feature >= 0) {
      node = point[tree[node].feature] < tree[node].threshold
                 ? tree[node].left
                 : tree[node].right;
    }
    sum += tree[node].value;
  }
  return sum / trees_.size();
}

}  // namespace cairn::tuner
