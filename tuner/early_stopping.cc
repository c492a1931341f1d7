// Median stopping rule and ASHA.
#include "tuner/early_stopping.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace cairn::tuner {
namespace {

using cairn::v1::EarlyStoppingConfig;
using cairn::v1::MetricSpec;

// Values are negated for MINIMIZE so that larger is always better here.
double Oriented(const MetricSpec& metric, double v) {
  return metric.goal() == MetricSpec::MINIMIZE ? -v : v;
}

// Best oriented value among points with step <= limit; false if none.
bool BestUpTo(const MetricSpec& metric, const Curve& c, int64_t limit,
              double* best) {
  bool any = false;
  for (const auto& [step, v] : c.points) {
    if (step > limit || std::isnan(v)) continue;
    const double o = Oriented(metric, v);
    if (!any || o > *best) *best = o;
    any = true;
  }
  return any;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

StopDecision MedianRule(const EarlyStoppingConfig::MedianStoppingRule& rule,
                        const MetricSpec& metric, const Curve& trial,
                        const std::vector<const Curve*>& others) {
  StopDecision d;
  if (trial.points.empty()) return d;
  const int64_t step = trial.points.back().first;
  if (step < rule.min_steps()) return d;
  const int min_completed =
      rule.min_completed_trials() > 0 ? rule.min_completed_trials() : 3;
  std::vector<double> averages;
  for (const Curve* other : others) {
    const Curve& c = *other;
    if (!c.completed || c.trial_id == trial.trial_id) continue;
    double sum = 0;
    int n = 0;
    for (const auto& [s, v] : c.points) {
      if (s > step || std::isnan(v)) continue;
      sum += Oriented(metric, v);
      ++n;
    }
    if (n > 0) averages.push_back(sum / n);
  }
  if (static_cast<int>(averages.size()) < min_completed) return d;
  double best = 0;
  if (!BestUpTo(metric, trial, step, &best)) return d;
  const double median = Median(averages);
  if (best < median) {
    d.stop = true;
    const double sign = metric.goal() == MetricSpec::MINIMIZE ? -1 : 1;
    d.reason = absl::StrCat(
        "median rule: best ", metric.metric_id(), " ", sign * best, " at step ",
        step, " is worse than the median running average ", sign * median,
        " of ", averages.size(), " completed trials");
  }
  return d;
}

StopDecision Asha(const EarlyStoppingConfig::SuccessiveHalving& rule,
                  const MetricSpec& metric, const Curve& trial,
                  const std::vector<const Curve*>& others) {
  StopDecision d;
  if (trial.points.empty() || rule.min_resource() <= 0) return d;
  const double eta = rule.reduction_factor() > 1 ? rule.reduction_factor() : 3;
  const int64_t step = trial.points.back().first;
  // The highest rung the trial has reached.
  int64_t rung = 0;
  for (double r = static_cast<double>(rule.min_resource());
       r <= static_cast<double>(step); r *= eta) {
    if (rule.max_resource() > 0 && r > rule.max_resource()) break;
    rung = static_cast<int64_t>(std::llround(r));
  }
  if (rung == 0) return d;
  double mine = 0;
  if (!BestUpTo(metric, trial, rung, &mine)) return d;
  std::vector<double> recorded = {mine};
  for (const Curve* other : others) {
    const Curve& c = *other;
    if (c.trial_id == trial.trial_id || c.points.empty()) continue;
    if (c.points.back().first < rung) continue;  // Did not reach the rung.
    double v = 0;
    if (BestUpTo(metric, c, rung, &v)) recorded.push_back(v);
  }
  if (static_cast<double>(recorded.size()) < eta) return d;
  std::sort(recorded.begin(), recorded.end(), std::greater<double>());
  const size_t keep =
      std::max<size_t>(1, static_cast<size_t>(recorded.size() / eta));
  const double cutoff = recorded[keep - 1];
  if (mine < cutoff) {
    d.stop = true;
    const double sign = metric.goal() == MetricSpec::MINIMIZE ? -1 : 1;
    d.reason =
        absl::StrCat("ASHA: at rung ", rung, " ", metric.metric_id(), " ",
                     sign * mine, " is not in the top 1/", eta, " of ",
                     recorded.size(), " trials (cutoff ", sign * cutoff, ")");
  }
  return d;
}

}  // namespace

StopDecision ShouldStop(const cairn::v1::StudySpec& spec, const Curve& trial,
                        const std::vector<Curve>& others) {
  std::vector<const Curve*> pointers;
  pointers.reserve(others.size());
  for (const Curve& c : others) pointers.push_back(&c);
  return ShouldStop(spec, trial, pointers);
}

StopDecision ShouldStop(const cairn::v1::StudySpec& spec, const Curve& trial,
                        const std::vector<const Curve*>& others) {
  if (spec.metrics_size() == 0) return {};
  const MetricSpec& metric = spec.metrics(0);
  const EarlyStoppingConfig& config = spec.early_stopping();
  switch (config.rule_case()) {
    case EarlyStoppingConfig::kMedian:
      return MedianRule(config.median(), metric, trial, others);
    case EarlyStoppingConfig::kAsha:
      return Asha(config.asha(), metric, trial, others);
    default:
      return {};
  }
}

}  // namespace cairn::tuner
