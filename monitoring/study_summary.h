// Conversions from the cairn.v1 API types to the label values and snapshots
// of monitoring/metrics.h, so cairnd builds its Snapshot in a few lines.
#ifndef CAIRN_MONITORING_STUDY_SUMMARY_H_
#define CAIRN_MONITORING_STUDY_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "monitoring/metrics.h"

namespace cairn::monitoring {

// "active", "inactive", "completed", "failed"; "unspecified" otherwise.
std::string_view StudyStateLabel(cairn::v1::Study::State state);

// "requested", "active", "stopping", "succeeded", "infeasible", "failed",
// "cancelled"; "unspecified" otherwise.
std::string_view TrialStateLabel(cairn::v1::Trial::State state);

// "random_search", "grid_search", "quasi_random_search", "gp_bandit"; what
// runs (api::EffectiveAlgorithm), so ALGORITHM_UNSPECIFIED is "gp_bandit".
std::string_view AlgorithmLabel(cairn::v1::StudySpec::Algorithm algorithm);

// The study label a client sets to say what drives the study; CairnSampler
// sets "optuna" (an Optuna study asks for trials only while its optimize()
// runs, so an idle one is not stalled).
inline constexpr char kDriverLabelKey[] = "cairn.driver";

// Who asks for the study's trials: "jobs" when it has a job template (cairnd
// runs them), "optuna" when spec.labels[kDriverLabelKey] says so, else
// "client". The CairnStudyStalled alert skips "optuna".
std::string_view DriverLabel(const cairn::v1::StudySpec& spec);

// "median", "asha", or "" when no rule is set.
std::string_view EarlyStoppingRuleLabel(
    const cairn::v1::EarlyStoppingConfig& config);

// How a finished trial ended: stopped_early wins over SUCCEEDED.
// REQUIRES: trial.state() is SUCCEEDED, INFEASIBLE or FAILED.
TrialOutcome TrialOutcomeOf(const cairn::v1::Trial& trial);

// A study snapshot from a study record and precomputed parts, e.g. the
// controller's own summary: trials by state (enum names or labels), best
// value per metric, and trial id -> metric id -> latest value of the
// running trials.
StudySnapshot MakeStudySnapshot(
    const cairn::v1::Study& study,
    const std::map<std::string, int64_t>& trials_by_state,
    const std::map<std::string, double>& best_by_metric,
    const std::map<int64_t, std::map<std::string, double>>& running_metrics);

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_STUDY_SUMMARY_H_
