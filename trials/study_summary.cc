// One study's summary for monitoring: see study_summary.h.
#include "trials/study_summary.h"

#include "api/trial_states.h"
#include "trials/optimal.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Trial;

StudySummary SummarizeStudy(
    const cairn::v1::Study& study, const TrialTable& trials,
    const std::map<int64_t, Measurement>& last_measurement) {
  StudySummary summary;
  summary.study = study;
  for (const auto& [id, t] : trials) {
    ++summary.trials_by_state[Trial::State_Name(t.state())];
  }
  summary.best_by_metric = BestFinalValues(study.spec(), trials.InIdOrder());
  for (const auto& [id, m] : last_measurement) {
    auto t = trials.find(id);
    if (t == trials.end() || !api::IsPendingState(t->second.state())) continue;
    for (const auto& metric : m.metrics()) {
      summary.running_metrics[id][metric.metric_id()] = metric.value();
    }
  }
  return summary;
}

StudySummary SummarizeUnloaded(const cairn::v1::Study& study,
                               const TrialSummary& trials) {
  StudySummary summary;
  summary.study = study;
  for (const auto& [state, count] : trials.count_by_state) {
    summary
        .trials_by_state[Trial::State_Name(static_cast<Trial::State>(state))] =
        count;
  }
  summary.best_by_metric = trials.best_by_metric;
  return summary;
}

}  // namespace cairn
