// TrialSummary kept change by change (trials/trial_summary.h) agrees with
// one computed from every trial, here for the count of ended trials whose
// job still runs (what a restart reads to end such jobs).
#include "trials/trial_summary.h"

#include "gtest/gtest.h"
#include "trials/trial_table.h"

namespace cairn {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

Trial MakeTrial(int64_t id, Trial::State state, TrialJob::State job) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  t.mutable_job()->set_state(job);
  return t;
}

// Puts `t` into `table`, keeping `summary` current, and checks it against a
// summary of every trial.
void Put(const StudySpec& spec, Trial t, TrialTable& table,
         TrialSummary& summary) {
  summary = SummaryAfterPut(spec, table, summary, {t});
  table.Put(std::move(t));
  EXPECT_EQ(summary, SummarizeTrials(spec, table));
}

TEST(TrialSummaryTest, CountsEndedTrialsWhoseJobStillRuns) {
  StudySpec spec;
  TrialTable table;
  TrialSummary summary;
  // A pending trial's running job is not counted: pending() covers it.
  Put(spec, MakeTrial(1, Trial::ACTIVE, TrialJob::RUNNING), table, summary);
  EXPECT_EQ(summary.live_jobs_of_ended, 0);
  // Completed through the API while its job runs on.
  Put(spec, MakeTrial(1, Trial::SUCCEEDED, TrialJob::RUNNING), table, summary);
  EXPECT_EQ(summary.live_jobs_of_ended, 1);
  // A stop asked for after the trial ended.
  Put(spec, MakeTrial(1, Trial::SUCCEEDED, TrialJob::STOPPING), table, summary);
  EXPECT_EQ(summary.live_jobs_of_ended, 1);
  Put(spec, MakeTrial(2, Trial::INFEASIBLE, TrialJob::RUNNING), table, summary);
  EXPECT_EQ(summary.live_jobs_of_ended, 2);
  // The job ended.
  Put(spec, MakeTrial(1, Trial::SUCCEEDED, TrialJob::CANCELLED), table,
      summary);
  EXPECT_EQ(summary.live_jobs_of_ended, 1);
  summary = SummaryAfterErase(spec, table, summary, 2);
  table.Erase(2);
  EXPECT_EQ(summary.live_jobs_of_ended, 0);
  EXPECT_EQ(summary, SummarizeTrials(spec, table));
}

}  // namespace
}  // namespace cairn
