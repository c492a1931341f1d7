// What the study controller reports to monitoring about one study: counts by
// state, the best value of each metric, the latest values of running trials.
#ifndef CAIRN_TRIALS_STUDY_SUMMARY_H_
#define CAIRN_TRIALS_STUDY_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>

#include "cairn/v1/study.pb.h"
#include "store/store.h"
#include "trials/trial_table.h"

namespace cairn {

// Counts the controller exposes to monitoring.
struct StudySummary {
  cairn::v1::Study study;  // With trial counts filled in.
  std::map<std::string, int64_t> trials_by_state;
  // Best final value per objective metric over SUCCEEDED trials, by its goal
  // (BestFinalValues): one objective, the best trial's value; several, the
  // best per metric independently.
  std::map<std::string, double> best_by_metric;
  // Latest reported value per metric of each pending trial.
  std::map<int64_t, std::map<std::string, double>> running_metrics;
};

// The summary of `study` (with counts filled in) from its trials and the
// latest measurement of each trial (only pending trials' count). Best values
// are BestFinalValues() (trials/optimal.h). Pure; thread-compatible.
StudySummary SummarizeStudy(
    const cairn::v1::Study& study, const TrialTable& trials,
    const std::map<int64_t, cairn::v1::Measurement>& last_measurement);

// The summary of a study whose trials are not in memory, from its stored
// TrialSummary (no running_metrics: they need the trials' measurements).
StudySummary SummarizeUnloaded(const cairn::v1::Study& study,
                               const TrialSummary& trials);

}  // namespace cairn

#endif  // CAIRN_TRIALS_STUDY_SUMMARY_H_
