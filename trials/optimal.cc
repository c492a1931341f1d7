// Best-trial and Pareto-front selection.
#include "trials/optimal.h"

#include <string>

#include "Eigen/Core"
#include "tuner/gp/pareto.h"

namespace cairn {

std::optional<double> FinalMetricValue(const cairn::v1::Trial& trial,
                                       const std::string& metric_id) {
  for (const auto& m : trial.final_measurement().metrics()) {
    if (m.metric_id() == metric_id) return m.value();
  }
  return std::nullopt;
}

std::vector<size_t> OptimalTrialIndices(
    const cairn::v1::StudySpec& spec,
    const std::vector<const cairn::v1::Trial*>& trials) {
  const int k = spec.metrics_size();
  // Objective vectors, sign-flipped so that larger is better everywhere.
  std::vector<size_t> candidates;
  std::vector<std::vector<double>> values;
  for (size_t i = 0; i < trials.size(); ++i) {
    if (trials[i]->state() != cairn::v1::Trial::SUCCEEDED) continue;
    std::vector<double> v;
    for (const auto& metric : spec.metrics()) {
      auto value = FinalMetricValue(*trials[i], metric.metric_id());
      if (!value) break;
      v.push_back(metric.goal() == cairn::v1::MetricSpec::MINIMIZE ? -*value
                                                                   : *value);
    }
    if (static_cast<int>(v.size()) != k) continue;
    candidates.push_back(i);
    values.push_back(std::move(v));
  }
  std::vector<size_t> out;
  if (candidates.empty()) return out;
  if (k == 1) {
    size_t best = 0;
    for (size_t j = 1; j < candidates.size(); ++j) {
      if (values[j][0] > values[best][0]) best = j;
    }
    out.push_back(candidates[best]);
    return out;
  }
  Eigen::MatrixXd points(static_cast<Eigen::Index>(candidates.size()), k);
  for (size_t j = 0; j < candidates.size(); ++j) {
    for (int m = 0; m < k; ++m) points(j, m) = values[j][m];
  }
  for (int j : gp::ParetoFrontIndices(points)) out.push_back(candidates[j]);
  return out;
}

std::map<std::string, double> BestFinalValues(
    const cairn::v1::StudySpec& spec,
    const std::vector<const cairn::v1::Trial*>& trials) {
  using cairn::v1::MetricSpec;
  std::map<std::string, MetricSpec::Goal> goals;
  for (const MetricSpec& metric : spec.metrics()) {
    if (metric.goal() == MetricSpec::MAXIMIZE ||
        metric.goal() == MetricSpec::MINIMIZE) {
      goals[metric.metric_id()] = metric.goal();
    }
  }
  std::map<std::string, double> best;
  for (const cairn::v1::Trial* trial : trials) {
    if (trial->state() != cairn::v1::Trial::SUCCEEDED) continue;
    for (const cairn::v1::Metric& metric :
         trial->final_measurement().metrics()) {
      auto goal = goals.find(metric.metric_id());
      if (goal == goals.end()) continue;
      auto [it, inserted] =
          best.try_emplace(metric.metric_id(), metric.value());
      if (!inserted && (goal->second == MetricSpec::MAXIMIZE
                            ? metric.value() > it->second
                            : metric.value() < it->second)) {
        it->second = metric.value();
      }
    }
  }
  return best;
}

}  // namespace cairn
