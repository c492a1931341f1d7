// See parameter_importance.h.
#include "tuner/parameter_importance.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner/search_space.h"

namespace cairn::tuner {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;

// A leaf of a tree with its box in the unit cube.
struct Leaf {
  std::vector<double> lo, hi;
  double value = 0.0;
  double volume = 1.0;
};

void CollectLeaves(const Tree& tree, int node, std::vector<double>& lo,
                   std::vector<double>& hi, std::vector<Leaf>* out) {
  const TreeNode& n = tree[node];
  if (n.feature < 0) {
    Leaf leaf{lo, hi, n.value, 1.0};
    for (size_t i = 0; i < lo.size(); ++i) leaf.volume *= hi[i] - lo[i];
    out->push_back(std::move(leaf));
    return;
  }
  const double t = std::clamp(n.threshold, lo[n.feature], hi[n.feature]);
  const double old_hi = hi[n.feature], old_lo = lo[n.feature];
  hi[n.feature] = t;
  CollectLeaves(tree, n.left, lo, hi, out);
  hi[n.feature] = old_hi;
  lo[n.feature] = t;
  CollectLeaves(tree, n.right, lo, hi, out);
  lo[n.feature] = old_lo;
}

// The variance over coordinate i of the tree's prediction averaged over
// the other coordinates (a step function of x_i), around `mean`.
double MainEffectVariance(const std::vector<Leaf>& leaves, int i, double mean) {
  std::vector<double> cuts = {0.0, 1.0};
  for (const Leaf& l : leaves) {
    cuts.push_back(l.lo[i]);
    cuts.push_back(l.hi[i]);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Each leaf adds value * (its volume in the other coordinates) to the
  // marginal on [lo_i, hi_i): a difference array over the cuts.
  std::vector<double> delta(cuts.size(), 0.0);
  auto at = [&](double v) {
    return std::lower_bound(cuts.begin(), cuts.end(), v) - cuts.begin();
  };
  for (const Leaf& l : leaves) {
    const double width = l.hi[i] - l.lo[i];
    if (width <= 0) continue;
    const double c = l.value * l.volume / width;
    delta[at(l.lo[i])] += c;
    delta[at(l.hi[i])] -= c;
  }
  double marginal = 0.0, variance = 0.0;
  for (size_t j = 0; j + 1 < cuts.size(); ++j) {
    marginal += delta[j];
    const double d = marginal - mean;
    variance += (cuts[j + 1] - cuts[j]) * d * d;
  }
  return variance;
}

std::string MetricIds(const StudySpec& spec) {
  return absl::StrJoin(spec.metrics(), ", ", [](std::string* out, auto& m) {
    absl::StrAppend(out, m.metric_id());
  });
}

absl::StatusOr<std::string> PickMetric(const StudySpec& spec,
                                       std::string_view metric_id) {
  if (spec.metrics_size() == 0) {
    return absl::FailedPreconditionError("the study has no metric");
  }
  if (metric_id.empty()) return spec.metrics(0).metric_id();
  for (const auto& m : spec.metrics()) {
    if (m.metric_id() == metric_id) return m.metric_id();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("metric_id \"", std::string(metric_id.substr(0, 100)),
                   "\" is not a metric of the study (", MetricIds(spec), ")"));
}

// The usable trials' unit points and final values of `metric`.
void CollectSamples(const SearchSpace& space, const std::vector<Trial>& trials,
                    const std::string& metric,
                    std::vector<std::vector<double>>* x,
                    std::vector<double>* y) {
  for (const Trial& t : trials) {
    if (t.state() != Trial::SUCCEEDED) continue;
    const auto& metrics = t.final_measurement().metrics();
    auto m = std::find_if(metrics.begin(), metrics.end(), [&](const auto& v) {
      return v.metric_id() == metric;
    });
    if (m == metrics.end() || !std::isfinite(m->value())) continue;
    absl::StatusOr<UnitPoint> point = space.TrialToUnitPoint(t);
    if (!point.ok()) continue;
    x->push_back(std::move(point->unit));
    y->push_back(m->value());
  }
}

// How many trials (the last ones) a fit over `dims` parameters may use.
size_t FittedTrials(const ImportanceOptions& options, int dims) {
  size_t keep = std::max(kMinImportanceTrials, options.max_coordinates / dims);
  if (options.max_trials > 0) {
    keep = std::min(keep, static_cast<size_t>(options.max_trials));
  }
  return keep;
}

}  // namespace

std::vector<double> TreeMainEffects(const Tree& tree, int dims) {
  std::vector<double> shares(dims, 0.0);
  std::vector<double> lo(dims, 0.0), hi(dims, 1.0);
  std::vector<Leaf> leaves;
  CollectLeaves(tree, 0, lo, hi, &leaves);
  double mean = 0.0, squares = 0.0;
  for (const Leaf& l : leaves) {
    mean += l.volume * l.value;
    squares += l.volume * l.value * l.value;
  }
  const double total = squares - mean * mean;
  if (!(total > 1e-12 * (squares + 1e-300))) return shares;
  for (int i = 0; i < dims; ++i) {
    shares[i] =
        std::clamp(MainEffectVariance(leaves, i, mean) / total, 0.0, 1.0);
  }
  return shares;
}

absl::StatusOr<ImportanceReport> ComputeParameterImportance(
    const StudySpec& spec, const std::vector<Trial>& trials,
    std::string_view metric_id, const ImportanceOptions& options) {
  absl::StatusOr<std::string> metric = PickMetric(spec, metric_id);
  if (!metric.ok()) return metric.status();
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  if (space->size() == 0) {
    return absl::FailedPreconditionError("the study has no parameters");
  }
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  CollectSamples(*space, trials, *metric, &x, &y);
  if (static_cast<int>(x.size()) < kMinImportanceTrials) {
    return absl::FailedPreconditionError(
        absl::StrCat("parameter importance needs at least ",
                     kMinImportanceTrials, " SUCCEEDED trials with a final ",
                     *metric, "; the study has ", x.size()));
  }
  const size_t keep = FittedTrials(options, space->size());
  if (x.size() > keep) {
    const size_t drop = x.size() - keep;
    x.erase(x.begin(), x.begin() + drop);
    y.erase(y.begin(), y.begin() + drop);
  }
  absl::StatusOr<RandomForest> forest =
      RandomForest::Fit(x, y, space->size(), options.forest);
  if (!forest.ok()) return forest.status();
  ImportanceReport report{*metric, static_cast<int>(x.size()), {}};
  std::vector<double> sum(space->size(), 0.0);
  for (const Tree& tree : forest->trees()) {
    const std::vector<double> shares = TreeMainEffects(tree, space->size());
    for (int i = 0; i < space->size(); ++i) sum[i] += shares[i];
  }
  for (int i = 0; i < space->size(); ++i) {
    report.parameters.push_back(
        {space->parameter(i).id, sum[i] / forest->trees().size()});
  }
  return report;
}

}  // namespace cairn::tuner
