// Label values and per-study snapshots from cairn.v1 protos.
#include "monitoring/study_summary.h"

#include <map>
#include <string>

#include "api/study_defaults.h"

namespace cairn::monitoring {

using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

std::string_view StudyStateLabel(Study::State state) {
  switch (state) {
    case Study::ACTIVE:
      return "active";
    case Study::INACTIVE:
      return "inactive";
    case Study::COMPLETED:
      return "completed";
    case Study::FAILED:
      return "failed";
    default:
      return "unspecified";
  }
}

std::string_view TrialStateLabel(Trial::State state) {
  switch (state) {
    case Trial::REQUESTED:
      return "requested";
    case Trial::ACTIVE:
      return "active";
    case Trial::STOPPING:
      return "stopping";
    case Trial::SUCCEEDED:
      return "succeeded";
    case Trial::INFEASIBLE:
      return "infeasible";
    case Trial::FAILED:
      return "failed";
    case Trial::CANCELLED:
      return "cancelled";
    default:
      return "unspecified";
  }
}

std::string_view AlgorithmLabel(StudySpec::Algorithm algorithm) {
  switch (api::EffectiveAlgorithm(algorithm)) {
    case StudySpec::RANDOM_SEARCH:
      return "random_search";
    case StudySpec::GRID_SEARCH:
      return "grid_search";
    case StudySpec::QUASI_RANDOM_SEARCH:
      return "quasi_random_search";
    case StudySpec::GP_BANDIT:
      return "gp_bandit";
    default:
      return "default";
  }
}

std::string_view DriverLabel(const StudySpec& spec) {
  if (spec.has_job_template()) return "jobs";
  auto driver = spec.labels().find(kDriverLabelKey);
  if (driver != spec.labels().end() && driver->second == "optuna") {
    return "optuna";
  }
  return "client";
}

std::string_view EarlyStoppingRuleLabel(
    const cairn::v1::EarlyStoppingConfig& config) {
  switch (config.rule_case()) {
    case cairn::v1::EarlyStoppingConfig::kMedian:
      return "median";
    case cairn::v1::EarlyStoppingConfig::kAsha:
      return "asha";
    default:
      return "";
  }
}

TrialOutcome TrialOutcomeOf(const Trial& trial) {
  if (trial.stopped_early()) return TrialOutcome::kStoppedEarly;
  switch (trial.state()) {
    case Trial::INFEASIBLE:
      return TrialOutcome::kInfeasible;
    case Trial::FAILED:
      return TrialOutcome::kFailed;
    case Trial::CANCELLED:
      return TrialOutcome::kCancelled;
    default:
      return TrialOutcome::kSucceeded;
  }
}

StudySnapshot MakeStudySnapshot(
    const Study& study, const std::map<std::string, int64_t>& trials_by_state,
    const std::map<std::string, double>& best_by_metric,
    const std::map<int64_t, std::map<std::string, double>>& running_metrics) {
  StudySnapshot snapshot;
  snapshot.name = study.name();
  snapshot.display_name = study.display_name();
  snapshot.state = std::string(StudyStateLabel(study.state()));
  snapshot.algorithm = std::string(AlgorithmLabel(study.spec().algorithm()));
  snapshot.driver = std::string(DriverLabel(study.spec()));
  snapshot.early_stopping_rule =
      std::string(EarlyStoppingRuleLabel(study.spec().early_stopping()));
  snapshot.trials_by_state = trials_by_state;
  snapshot.best_objective = best_by_metric;
  for (const auto& [trial_id, metrics] : running_metrics) {
    for (const auto& [metric, value] : metrics) {
      snapshot.running_trial_metrics.push_back({trial_id, metric, value});
    }
  }
  return snapshot;
}

}  // namespace cairn::monitoring
