// GRID_SEARCH designer.
#include "tuner/grid_designer.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tuner/designer_util.h"

namespace cairn::tuner {
namespace {

using cairn::v1::ParameterSpec;

uint64_t SatMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// `n` evenly spaced unit coordinates, both ends included; n == 1: the center.
std::vector<double> UnitGrid(int n) {
  if (n <= 1) return {0.5};
  std::vector<double> u(n);
  for (int k = 0; k < n; ++k) u[k] = static_cast<double>(k) / (n - 1);
  return u;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GridDesigner>> GridDesigner::Create(
    const cairn::v1::StudySpec& spec) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  return std::unique_ptr<GridDesigner>(new GridDesigner(*std::move(space)));
}

GridDesigner::GridDesigner(SearchSpace space) : space_(std::move(space)) {
  const int n = space_.size();
  values_.resize(n);
  children_at_.resize(n);
  weight_.resize(n);
  count_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const FlatParameter& f = space_.parameter(i);
    if (f.parent < 0) roots_.push_back(i);
    std::vector<double>& v = values_[i];
    const int resolution =
        f.grid_resolution > 0 ? f.grid_resolution : kDefaultResolution;
    switch (f.type) {
      case ParameterSpec::DOUBLE:
        for (double u : UnitGrid(resolution))
          v.push_back(space_.FromUnit(i, u));
        break;
      case ParameterSpec::INTEGER: {
        const double range = f.NumValues();
        const bool full = f.grid_resolution == 0 ? range <= kMaxFullIntegerGrid
                                                 : range <= f.grid_resolution;
        if (full) {
          for (double x = f.min_value; x <= f.max_value; ++x) v.push_back(x);
        } else {
          for (double u : UnitGrid(resolution)) {
            v.push_back(space_.FromUnit(i, u));
          }
          for (int c : f.children) {
            const auto& pv = space_.parameter(c).parent_values;
            v.insert(v.end(), pv.begin(), pv.end());
          }
        }
        break;
      }
      case ParameterSpec::DISCRETE:
        v = f.discrete_values;
        break;
      default:  // CATEGORICAL: indices.
        for (size_t k = 0; k < f.categories.size(); ++k) {
          v.push_back(static_cast<double>(k));
        }
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    children_at_[i].resize(v.size());
    for (size_t k = 0; k < v.size(); ++k) {
      for (int c : f.children) {
        const auto& pv = space_.parameter(c).parent_values;
        if (std::find(pv.begin(), pv.end(), v[k]) != pv.end()) {
          children_at_[i][k].push_back(c);
        }
      }
    }
  }
  // Children have larger flat indices than their parents: count bottom-up.
  for (int i = n - 1; i >= 0; --i) {
    weight_[i].assign(values_[i].size(), 1);
    for (size_t k = 0; k < values_[i].size(); ++k) {
      for (int c : children_at_[i][k]) {
        weight_[i][k] = SatMul(weight_[i][k], count_[c]);
      }
      count_[i] = SatAdd(count_[i], weight_[i][k]);
    }
  }
  total_ = 1;
  for (int r : roots_) total_ = SatMul(total_, count_[r]);
}

void GridDesigner::Unrank(const std::vector<int>& group, uint64_t index,
                          Assignment* a) const {
  // Mixed radix, the last parameter of the group varying fastest.
  for (auto it = group.rbegin(); it != group.rend(); ++it) {
    const int i = *it;
    uint64_t digit = index % count_[i];
    index /= count_[i];
    size_t k = 0;
    while (k + 1 < weight_[i].size() && digit >= weight_[i][k]) {
      digit -= weight_[i][k];
      ++k;
    }
    a->values[i] = values_[i][k];
    a->active[i] = true;
    Unrank(children_at_[i][k], digit, a);
  }
}

Assignment GridDesigner::PointAt(uint64_t index) const {
  Assignment a;
  a.values.assign(space_.size(), 0.0);
  a.active.assign(space_.size(), false);
  Unrank(roots_, index, &a);
  return a;
}

absl::StatusOr<std::vector<Suggestion>> GridDesigner::Suggest(
    const DesignerContext& context, int count) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("count ", count, " must be >= 1"));
  }
  absl::flat_hash_set<std::string> taken = internal::AllTrialKeys(context);
  std::vector<Suggestion> out;
  // Every skipped point is a distinct key of `taken`, so this loop runs at
  // most trials + count times.
  for (uint64_t index = 0;
       index < total_ && static_cast<int>(out.size()) < count; ++index) {
    std::vector<cairn::v1::Parameter> params =
        space_.ToParameters(PointAt(index));
    if (taken.insert(SearchSpace::CanonicalKey(params)).second) {
      out.push_back(Suggestion{std::move(params), {}});
    }
  }
  return out;
}

}  // namespace cairn::tuner
