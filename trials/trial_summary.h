// A study's TrialSummary (store/store.h: counts by state and best values, the
// c/ record a restart reads instead of the trials), computed from its
// TrialTable and kept up to date change by change, so that each write costs
// what it did before (no pass over every trial).
#ifndef CAIRN_TRIALS_TRIAL_SUMMARY_H_
#define CAIRN_TRIALS_TRIAL_SUMMARY_H_

#include <cstdint>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "store/store.h"
#include "trials/trial_table.h"

namespace cairn {

// The summary of every trial in `trials` (one pass).
TrialSummary SummarizeTrials(const cairn::v1::StudySpec& spec,
                             const TrialTable& trials);

// `current` (the summary of `trials`) after putting `changed` into
// `trials` (inserting or replacing by id). Costs O(changed), except when a
// SUCCEEDED trial's final measurement changes or it leaves SUCCEEDED (never
// done by the controller): then the best values are recomputed.
TrialSummary SummaryAfterPut(const cairn::v1::StudySpec& spec,
                             const TrialTable& trials, TrialSummary current,
                             const std::vector<cairn::v1::Trial>& changed);

// `current` after erasing trial `trial_id` from `trials` (which holds it).
// Recomputes the best values when it was SUCCEEDED.
TrialSummary SummaryAfterErase(const cairn::v1::StudySpec& spec,
                               const TrialTable& trials, TrialSummary current,
                               int64_t trial_id);

}  // namespace cairn

#endif  // CAIRN_TRIALS_TRIAL_SUMMARY_H_
