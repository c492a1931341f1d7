// The job runner's stop paths (tests/jobs/job_runner_fixture.h): a stopped
// study or trial ends its job (SIGTERM with the grace, then the exit) and
// frees its slot; a job still running after its trial ended stops when a
// stop is asked for again (StopTrial, SetStudyState), and a deleted study's
// jobs end; after a restart such a job is ended, not left running.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "jobs/job_runner.h"
#include "tests/jobs/job_runner_fixture.h"
#include "tests/testing/test_util.h"

namespace cairn::jobs {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

class JobRunnerStopTest : public JobRunnerUnitTest {
 protected:
  // Runs the one trial `trial` of a max_trials 1 study and completes it
  // through the API (last measurement at step 4) while its job runs: the
  // runner lets the job run on. Returns the job's start.
  FakeExecutor::Started CompleteWhileItRuns(const std::string& trial) {
    std::vector<FakeExecutor::Started> starts = FirstPass(Options());
    EXPECT_EQ(starts.size(), 1u);
    Report(trial, 0.25, 4);
    EXPECT_TRUE(manager_->CompleteTrial(trial, std::nullopt, false, "").ok());
    runner_->RunOnce();
    EXPECT_TRUE(executor_.terminates().empty());
    EXPECT_EQ(Get(trial).job().state(), TrialJob::RUNNING);
    return starts.empty() ? FakeExecutor::Started() : starts[0];
  }

  // Completes a running trial through the API (and asks for a stop if
  // `stop_asked`), then restarts: the new cairnd kills the job's orphan and
  // records it CANCELLED; nothing resumes, and a third finds nothing to end.
  void ExpectRestartEndsTheOrphan(bool stop_asked) {
    const std::string trial = CreateStudy("max_trials: 1") + "/trials/1";
    const FakeExecutor::Started started = CompleteWhileItRuns(trial);
    if (stop_asked) ASSERT_TRUE(manager_->StopTrial(trial).ok());

    OpenManager();  // A new cairnd on the same store.
    FakeExecutor executor2;
    NewRunner(Options(), &executor2);  // Recover()s.
    EXPECT_EQ(executor2.orphans(),
              (std::vector<std::pair<int64_t, int64_t>>{
                  {started.handle.pid, started.handle.start_ticks}}));
    const Trial t = Get(trial);
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << "the trial keeps its result";
    EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
    EXPECT_EQ(t.job().pid(), 0);
    EXPECT_EQ(t.job().message(),
              std::string(stop_asked ? "stopped after the trial ended"
                                     : "ran on after the trial ended") +
                  "; cairnd restarted and ended the job (orphan pid " +
                  std::to_string(started.handle.pid) + " killed)");
    runner_->RunOnce();
    EXPECT_TRUE(executor2.starts().empty()) << "nothing resumes";
    EXPECT_EQ(runner_->Counts().running, 0);

    OpenManager();
    FakeExecutor executor3;
    NewRunner(Options(), &executor3);
    EXPECT_TRUE(executor3.orphans().empty());
    EXPECT_EQ(Get(trial).job().state(), TrialJob::CANCELLED);
    runner_.reset();  // Before the executors go.
  }

  // Two one-trial studies and one job slot: the first runs, the second's
  // trial waits QUEUED. Returns the first's start; sets `*second`.
  FakeExecutor::Started OneSlotTwoStudies(std::string* first,
                                          std::string* second) {
    JobRunnerOptions options = Options();
    options.max_running_jobs = 1;
    *first = CreateStudy("max_trials: 1");
    *second = CreateStudy("max_trials: 1");
    std::vector<FakeExecutor::Started> starts = FirstPass(options);
    EXPECT_EQ(starts.size(), 1u);
    EXPECT_EQ(Get(*second + "/trials/1").job().state(), TrialJob::QUEUED);
    return starts.empty() ? FakeExecutor::Started() : starts[0];
  }
};

TEST_F(JobRunnerStopTest, StoppingTheStudyStopsItsJobsWithoutFailingTrials) {
  // Two trials run, one waits for a GPU; one failure would fail the study.
  const std::string study = CreateStudy(
      "max_trials: 4 max_parallel_trials: 3 max_failed_trials: 1 "
      "job_template { gpus_per_trial: 1 }");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/2));
  ASSERT_EQ(starts.size(), 2u);
  Report(study + "/trials/1", 0.25, 4);  // Trial 2 reports nothing.
  ASSERT_TRUE(manager_->SetStudyState(study, Study::INACTIVE).ok());
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 2u);
  std::set<int64_t> terminated;
  for (const auto& [pid, grace] : executor_.terminates()) {
    terminated.insert(pid);
    EXPECT_EQ(grace, absl::Seconds(7));
  }
  EXPECT_EQ(terminated,
            (std::set<int64_t>{starts[0].handle.pid, starts[1].handle.pid}));
  EXPECT_EQ(Get(study + "/trials/1").job().message(), "cancelled");
  const Trial queued = Get(study + "/trials/3");
  EXPECT_EQ(queued.state(), Trial::CANCELLED);
  EXPECT_EQ(queued.infeasible_reason(),
            "stopped: the study stopped before it started");
  EXPECT_EQ(queued.job().state(), TrialJob::CANCELLED);

  for (const auto& s : starts) executor_.Exit(s.handle.pid, 0, 15);
  runner_->RunOnce();
  const Trial reported = Get(study + "/trials/1");
  EXPECT_EQ(reported.state(), Trial::SUCCEEDED);
  EXPECT_TRUE(reported.stopped_early());
  EXPECT_EQ(reported.final_measurement().step_count(), 4);
  const Trial silent = Get(study + "/trials/2");
  EXPECT_EQ(silent.state(), Trial::CANCELLED);
  EXPECT_EQ(silent.infeasible_reason(),
            "stopped: the study stopped before it reported");
  for (const Trial& t : {reported, silent}) {
    EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
    EXPECT_EQ(t.job().message(),
              "cancelled: the study stopped; job killed by signal 15");
    EXPECT_EQ(t.job().pid(), 0);
  }
  auto got = manager_->GetStudy(study);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state(), Study::INACTIVE) << got->inactive_reason();
  EXPECT_EQ(got->failed_count(), 0) << "CANCELLED is not a failure";
  EXPECT_EQ(got->cancelled_count(), 2);
  EXPECT_EQ(got->infeasible_count(), 0);
  EXPECT_EQ(got->trial_count(), 3);
  EXPECT_EQ(got->pending_count(), 0);
  EXPECT_EQ(executor_.starts().size(), 2u);
  EXPECT_EQ(runner_->Counts().running, 0);

  // Resumed, the study runs on: no stopped trial counts as FAILED.
  ASSERT_TRUE(manager_->SetStudyState(study, Study::ACTIVE).ok());
  runner_->RunOnce();
  got = manager_->GetStudy(study);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state(), Study::ACTIVE) << got->inactive_reason();
  EXPECT_EQ(executor_.starts().size(), 3u);
}

TEST_F(JobRunnerStopTest, StoppedTrialEndsItsJobAndCompletesOrCancels) {
  const std::string study = CreateStudy("max_trials: 2 max_parallel_trials: 2");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options());
  ASSERT_EQ(starts.size(), 2u);
  Report(study + "/trials/1", 0.25, 4);  // Trial 2 reports nothing.
  ASSERT_TRUE(manager_->StopTrial(study + "/trials/1").ok());
  ASSERT_TRUE(manager_->StopTrial(study + "/trials/2").ok());
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 2u);
  EXPECT_EQ(Get(study + "/trials/1").job().message(), "stopped");

  for (const auto& s : starts) executor_.Exit(s.handle.pid, 0, 15);
  runner_->RunOnce();
  const Trial reported = Get(study + "/trials/1");
  EXPECT_EQ(reported.state(), Trial::SUCCEEDED);
  EXPECT_TRUE(reported.stopped_early());
  EXPECT_EQ(reported.final_measurement().step_count(), 4);
  EXPECT_EQ(reported.job().state(), TrialJob::CANCELLED);
  EXPECT_EQ(reported.job().message(), "stopped early; job killed by signal 15");
  const Trial silent = Get(study + "/trials/2");
  EXPECT_EQ(silent.state(), Trial::CANCELLED);
  EXPECT_EQ(silent.infeasible_reason(),
            "stopped before reporting its objective");
  EXPECT_EQ(silent.job().state(), TrialJob::CANCELLED);
}

TEST_F(JobRunnerStopTest, QueuedTrialStoppedBeforeItStartsNeverRuns) {
  const std::string study = CreateStudy(
      "max_trials: 2 max_parallel_trials: 2 job_template { gpus_per_trial: 1 "
      "}");
  ASSERT_EQ(FirstPass(Options(/*gpus=*/1)).size(), 1u);
  ASSERT_EQ(Get(study + "/trials/2").job().state(), TrialJob::QUEUED);
  ASSERT_TRUE(manager_->StopTrial(study + "/trials/2").ok());
  runner_->RunOnce();
  const Trial t = Get(study + "/trials/2");
  EXPECT_EQ(t.state(), Trial::CANCELLED);
  EXPECT_EQ(t.infeasible_reason(), "stopped before reporting");
  EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
  EXPECT_EQ(t.job().message(), "stopped before it started");
  EXPECT_EQ(executor_.starts().size(), 1u);
}

TEST_F(JobRunnerStopTest, JobOfAnEndedTrialRunsOnUntilAStopIsAsked) {
  const std::string trial = CreateStudy("max_trials: 1") + "/trials/1";
  const FakeExecutor::Started started = CompleteWhileItRuns(trial);

  // Stopped after its trial ended: the job is what stops.
  absl::StatusOr<Trial> stopped = manager_->StopTrial(trial);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->state(), Trial::SUCCEEDED);
  EXPECT_EQ(stopped->job().state(), TrialJob::STOPPING);
  // The runner's copy of the job (RUNNING) does not undo the stop.
  TrialJob stale = Get(trial).job();
  stale.set_state(TrialJob::RUNNING);
  ASSERT_TRUE(manager_->UpdateTrialJob(trial, stale).ok());
  EXPECT_EQ(Get(trial).job().state(), TrialJob::STOPPING);
  ASSERT_TRUE(manager_->StopTrial(trial).ok()) << "asked again while it runs";
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  EXPECT_EQ(executor_.terminates()[0].first, started.handle.pid);
  EXPECT_EQ(executor_.terminates()[0].second, absl::Seconds(7));
  EXPECT_EQ(runner_->Counts().running, 1) << "its slot waits for its exit";

  executor_.Exit(started.handle.pid, 0, 15);
  runner_->RunOnce();
  const Trial t = Get(trial);
  EXPECT_EQ(t.state(), Trial::SUCCEEDED) << "the trial keeps its result";
  EXPECT_EQ(t.final_measurement().step_count(), 4);
  EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
  EXPECT_EQ(t.job().message(),
            "stopped after the trial ended; job killed by signal 15");
  EXPECT_EQ(t.job().pid(), 0);
  EXPECT_EQ(runner_->Counts().running, 0);
  absl::StatusOr<Trial> again = manager_->StopTrial(trial);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("already SUCCEEDED"),
            std::string::npos)
      << again.status();
}

// cairnd dies while the job of an ended trial runs (on, or STOPPING after
// a stop was asked for): the next cairnd kills the orphan and records the
// job's end, so it neither runs on unowned nor reads STOPPING forever.
TEST_F(JobRunnerStopTest, RestartEndsTheOrphanOfAnEndedTrial) {
  ExpectRestartEndsTheOrphan(/*stop_asked=*/false);
}

TEST_F(JobRunnerStopTest, RestartEndsTheOrphanOfAStoppingJob) {
  ExpectRestartEndsTheOrphan(/*stop_asked=*/true);
}

TEST_F(JobRunnerStopTest, StoppingAFinishedStudyEndsJobsStillRunning) {
  const std::string study = CreateStudy("max_trials: 1");
  const std::string trial = study + "/trials/1";
  const FakeExecutor::Started started = CompleteWhileItRuns(trial);
  ASSERT_EQ(manager_->GetStudy(study)->state(), Study::COMPLETED);

  absl::StatusOr<Study> stopped =
      manager_->SetStudyState(study, Study::INACTIVE);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->state(), Study::COMPLETED) << "keeps its outcome";
  EXPECT_EQ(Get(trial).job().state(), TrialJob::STOPPING);
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  executor_.Exit(started.handle.pid, 0, 9);
  runner_->RunOnce();
  EXPECT_EQ(Get(trial).job().state(), TrialJob::CANCELLED);
  EXPECT_EQ(Get(trial).state(), Trial::SUCCEEDED);
  EXPECT_EQ(runner_->Counts().running, 0);
}

TEST_F(JobRunnerStopTest, StoppedJobFreesItsSlotOnlyOnceItExited) {
  std::string first, second;
  const FakeExecutor::Started started = OneSlotTwoStudies(&first, &second);
  ASSERT_TRUE(manager_->StopTrial(first + "/trials/1").ok());
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  EXPECT_EQ(Get(first + "/trials/1").job().state(), TrialJob::STOPPING);
  clock_.Advance(absl::Seconds(3));  // within the grace: still running
  runner_->RunOnce();
  EXPECT_EQ(executor_.starts().size(), 1u) << "started before the slot freed";

  executor_.Exit(started.handle.pid, 0, 15);
  runner_->RunOnce();  // the exit frees the slot; the same pass fills it
  EXPECT_EQ(Get(first + "/trials/1").state(), Trial::CANCELLED);
  ASSERT_EQ(executor_.starts().size(), 2u);
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_STUDY"), second);
}

TEST_F(JobRunnerStopTest, DeletedStudyEndsItsJobAndFreesItsSlot) {
  std::string doomed, next;
  const FakeExecutor::Started started = OneSlotTwoStudies(&doomed, &next);
  ASSERT_TRUE(manager_->DeleteStudy(doomed).ok());
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  EXPECT_EQ(executor_.terminates()[0].first, started.handle.pid);
  executor_.Exit(started.handle.pid, 0, 15);
  runner_->RunOnce();
  ASSERT_EQ(executor_.starts().size(), 2u);
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_STUDY"), next);
}

}  // namespace
}  // namespace cairn::jobs
