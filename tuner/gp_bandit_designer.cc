// GP_BANDIT designer: trials <-> engine points, metrics -> objectives.
#include "tuner/gp_bandit_designer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/trial_states.h"
#include "tuner/designer_util.h"

namespace cairn::tuner {
namespace {

using cairn::v1::ParameterSpec;
using cairn::v1::Trial;

constexpr double kMaxIntegerGrid = 10000;

// Unit positions of every value of parameter i, increasing.
std::vector<double> UnitGrid(const SearchSpace& space, int i) {
  const FlatParameter& p = space.parameter(i);
  std::vector<double> grid;
  if (p.type == ParameterSpec::DISCRETE) {
    for (double v : p.discrete_values) grid.push_back(space.ToUnit(i, v));
  } else {
    for (double v = p.min_value; v <= p.max_value; v += 1.0) {
      grid.push_back(space.ToUnit(i, v));
    }
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

// The vectors of `rows` (each `cols` long) as the rows of a matrix.
Eigen::MatrixXd StackRows(const std::vector<Eigen::VectorXd>& rows, int cols) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), cols);
  for (size_t i = 0; i < rows.size(); ++i) m.row(i) = rows[i].transpose();
  return m;
}

// Records on each suggestion its share of the time Suggest took and how it
// was chosen (kinds[i]).
void AddSuggestionMetadata(double seconds,
                           const std::vector<std::string>& kinds,
                           std::vector<Suggestion>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].metadata["suggestion_seconds"] =
        absl::StrFormat("%.6f", seconds / static_cast<double>(out.size()));
    out[i].metadata["suggestion_kind"] = kinds[i];
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Designer>> GpBanditDesigner::Create(
    const cairn::v1::StudySpec& spec, gp::GpBanditOptions options) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  std::vector<gp::Dimension> dims(space->size());
  for (int i = 0; i < space->size(); ++i) {
    const FlatParameter& p = space->parameter(i);
    gp::Dimension& dim = dims[i];
    switch (p.type) {
      case ParameterSpec::CATEGORICAL:
        dim.kind = gp::Dimension::Kind::kCategorical;
        dim.num_categories = static_cast<int>(p.categories.size());
        break;
      case ParameterSpec::DISCRETE:
        dim.grid = UnitGrid(*space, i);
        break;
      case ParameterSpec::INTEGER:
        if (p.NumValues() <= kMaxIntegerGrid || !p.children.empty()) {
          dim.grid = UnitGrid(*space, i);
        }
        break;
      default:
        break;
    }
    if (p.parent >= 0) {
      dim.parent = p.parent;
      const FlatParameter& parent = space->parameter(p.parent);
      for (double v : p.parent_values) {
        dim.parent_values.push_back(parent.type == ParameterSpec::CATEGORICAL
                                        ? v
                                        : space->ToUnit(p.parent, v));
      }
    }
  }
  if (absl::Status s = gp::MixedSpace::Validate(dims); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GP_BANDIT cannot model this search space: ", s.message()));
  }
  std::vector<Objective> objectives;
  std::vector<Safety> safety;
  for (const cairn::v1::MetricSpec& m : spec.metrics()) {
    const bool maximize = m.goal() != cairn::v1::MetricSpec::MINIMIZE;
    if (m.has_safety_threshold()) {
      safety.push_back({m.metric_id(), maximize, m.safety_threshold()});
    } else {
      objectives.push_back({m.metric_id(), maximize ? 1.0 : -1.0});
    }
  }
  if (objectives.empty()) {
    // Only safety metrics: optimize them as objectives.
    for (const Safety& s : safety) {
      objectives.push_back({s.metric_id, s.maximize ? 1.0 : -1.0});
    }
    safety.clear();
  }
  return std::unique_ptr<Designer>(new GpBanditDesigner(
      *std::move(space), gp::MixedSpace(std::move(dims)), std::move(objectives),
      std::move(safety), spec.seed(), std::move(options)));
}

GpBanditDesigner::GpBanditDesigner(SearchSpace space, gp::MixedSpace mixed,
                                   std::vector<Objective> objectives,
                                   std::vector<Safety> safety, int64_t seed,
                                   gp::GpBanditOptions options)
    : space_(std::move(space)),
      objectives_(std::move(objectives)),
      safety_(std::move(safety)),
      seed_(seed),
      bandit_(std::move(mixed), std::move(options)) {}

std::optional<Eigen::VectorXd> GpBanditDesigner::Encode(
    const Trial& trial) const {
  absl::StatusOr<UnitPoint> u = space_.TrialToUnitPoint(trial);
  if (!u.ok()) return std::nullopt;
  Eigen::VectorXd x(space_.size());
  for (int i = 0; i < space_.size(); ++i) {
    x[i] = bandit_.space().IsCategorical(i) ? space_.FromUnit(i, u->unit[i])
                                            : u->unit[i];
  }
  bandit_.space().Canonicalize(x);
  return x;
}

std::vector<double> GpBanditDesigner::Decode(const Eigen::VectorXd& x) const {
  std::vector<double> unit(space_.size());
  for (int i = 0; i < space_.size(); ++i) {
    if (!bandit_.space().IsActive(x, i)) {
      unit[i] = 0.5;
    } else if (bandit_.space().IsCategorical(i)) {
      unit[i] = space_.ToUnit(i, x[i]);
    } else {
      unit[i] = x[i];
    }
  }
  return unit;
}

bool GpBanditDesigner::ObjectiveValues(const Trial& trial,
                                       Eigen::VectorXd* y) const {
  const int num_obj = static_cast<int>(objectives_.size());
  *y = Eigen::VectorXd::Constant(num_obj, NAN);
  bool infeasible = trial.state() == Trial::INFEASIBLE;
  if (!infeasible) {
    const auto& metrics = trial.final_measurement().metrics();
    for (int m = 0; m < num_obj; ++m) {
      for (const cairn::v1::Metric& metric : metrics) {
        if (metric.metric_id() == objectives_[m].metric_id) {
          (*y)[m] = objectives_[m].sign * metric.value();
        }
      }
      if (!std::isfinite((*y)[m])) infeasible = true;
    }
    for (const Safety& s : safety_) {
      for (const cairn::v1::Metric& metric : metrics) {
        if (metric.metric_id() != s.metric_id) continue;
        const bool safe = s.maximize ? metric.value() >= s.threshold
                                     : metric.value() <= s.threshold;
        if (!safe) infeasible = true;
      }
    }
  }
  return infeasible;
}

gp::BanditData GpBanditDesigner::CollectData(
    const DesignerContext& context) const {
  const int dims = space_.size();
  const int num_obj = static_cast<int>(objectives_.size());
  std::vector<Eigen::VectorXd> xs, pending;
  std::vector<Eigen::VectorXd> ys;
  gp::BanditData data;
  for (const Trial* trial : context.trials) {
    if (trial == nullptr) continue;
    const Trial::State state = trial->state();
    if (state != Trial::SUCCEEDED && state != Trial::INFEASIBLE &&
        !api::IsPendingState(state)) {
      continue;
    }
    std::optional<Eigen::VectorXd> x = Encode(*trial);
    if (!x.has_value()) continue;
    if (api::IsPendingState(state)) {
      pending.push_back(*std::move(x));
      continue;
    }
    Eigen::VectorXd y;
    const bool infeasible = ObjectiveValues(*trial, &y);
    xs.push_back(*std::move(x));
    ys.push_back(infeasible ? Eigen::VectorXd::Zero(num_obj) : y);
    data.infeasible.push_back(infeasible);
  }
  data.x = StackRows(xs, dims);
  data.y = StackRows(ys, num_obj);
  data.pending = StackRows(pending, dims);
  data.num_trials = static_cast<int64_t>(internal::NextPointIndex(context));
  return data;
}

std::vector<Suggestion> GpBanditDesigner::DecodeDistinct(
    const DesignerContext& context, const std::vector<Eigen::VectorXd>& points,
    int64_t num_trials, std::vector<std::string>* kinds) const {
  // Engine points are distinct from pending ones; their decoded parameters
  // could still collide (an INTEGER range too large for a grid), so check the
  // keys and replace a collision by a seeded random point.
  absl::flat_hash_set<std::string> taken = internal::PendingTrialKeys(context);
  gp::Rng rng(gp::MixSeed(static_cast<uint64_t>(seed_),
                          static_cast<uint64_t>(num_trials), 0xD5));
  std::vector<Suggestion> out;
  for (size_t i = 0; i < points.size(); ++i) {
    Suggestion s = space_.SuggestionFromUnit(Decode(points[i]));
    std::string kind = i < bandit_.last_kinds().size()
                           ? bandit_.last_kinds()[i]
                           : std::string("quasi_random");
    for (int attempt = 0;
         attempt < internal::kMaxAttempts &&
         taken.contains(SearchSpace::CanonicalKey(s.parameters));
         ++attempt) {
      s = space_.SuggestionFromUnit(Decode(bandit_.space().Sample(rng)));
      kind = "random";
    }
    if (!taken.insert(SearchSpace::CanonicalKey(s.parameters)).second) break;
    out.push_back(std::move(s));
    kinds->push_back(std::move(kind));
  }
  return out;
}

absl::StatusOr<std::vector<Suggestion>> GpBanditDesigner::Suggest(
    const DesignerContext& context, int count) {
  const auto start = std::chrono::steady_clock::now();
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("count must be >= 1, got ", count));
  }
  const gp::BanditData data = CollectData(context);
  absl::StatusOr<std::vector<Eigen::VectorXd>> points =
      bandit_.Suggest(data, count, static_cast<uint64_t>(seed_));
  if (!points.ok()) return points.status();
  std::vector<std::string> kinds;
  std::vector<Suggestion> out =
      DecodeDistinct(context, *points, data.num_trials, &kinds);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  AddSuggestionMetadata(seconds, kinds, out);
  return out;
}

}  // namespace cairn::tuner
