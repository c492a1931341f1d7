// Which trials are best: single-objective best and the Pareto front.
#ifndef CAIRN_TRIALS_OPTIMAL_H_
#define CAIRN_TRIALS_OPTIMAL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn {

// The objective value of `metric` in the trial's final measurement, if any.
std::optional<double> FinalMetricValue(const cairn::v1::Trial& trial,
                                       const std::string& metric_id);

// Indices into `trials` of the optimal ones among those SUCCEEDED with every
// objective present: the single best (lowest id wins ties) for one metric,
// the non-dominated set (in id order) for several.
std::vector<size_t> OptimalTrialIndices(
    const cairn::v1::StudySpec& spec,
    const std::vector<const cairn::v1::Trial*>& trials);

// The best final value of each spec metric over the SUCCEEDED `trials` that
// report it, by the metric's goal (metrics with GOAL_UNSPECIFIED are
// skipped; a metric no such trial reports is absent). The one definition of
// "best value" for the controller and for monitoring.
std::map<std::string, double> BestFinalValues(
    const cairn::v1::StudySpec& spec,
    const std::vector<const cairn::v1::Trial*>& trials);

}  // namespace cairn

#endif  // CAIRN_TRIALS_OPTIMAL_H_
