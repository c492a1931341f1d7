// The job runner in-process (tests/jobs/job_runner_fixture.h): starts, GPU
// slots, metrics, restarts, timeouts, stops, recovery and replicas. The
// stop paths are in job_runner_stop_test.cc.
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "jobs/executor.h"
#include "jobs/job_runner.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "store/store.h"
#include "tests/jobs/job_runner_fixture.h"
#include "tests/testing/manual_clock.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"
#include "util/clock.h"

namespace cairn::jobs {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

TEST_F(JobRunnerUnitTest, StartsTrialsUpToParallelismWithTheJobEnvironment) {
  const std::string study = CreateStudy("max_trials: 5 max_parallel_trials: 2");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options());
  ASSERT_EQ(starts.size(), 2u);
  runner_->RunOnce();
  EXPECT_EQ(executor_.starts().size(), 2u) << "parallelism exceeded";

  const JobSpec& spec = starts[0].spec;
  const Trial t = Get(study + "/trials/1");
  const std::string dir = dir_.path() + "/jobs/study-1/trial-1";
  EXPECT_EQ(t.state(), Trial::ACTIVE);
  EXPECT_EQ(t.job().state(), TrialJob::RUNNING);
  EXPECT_EQ(t.job().pid(), starts[0].handle.pid);
  EXPECT_EQ(t.job().proc_start_ticks(), starts[0].handle.start_ticks);
  EXPECT_EQ(t.job().attempts(), 1);
  EXPECT_EQ(t.job().job_dir(), dir);
  ASSERT_EQ(spec.argv.size(), 5u);
  EXPECT_EQ(spec.argv[0], "/bin/train");
  EXPECT_EQ(spec.argv[1], "--fast");
  EXPECT_EQ(spec.argv[2].rfind("--x1=", 0), 0u) << spec.argv[2];
  EXPECT_EQ(spec.argv[3].rfind("--x2=", 0), 0u) << spec.argv[3];
  EXPECT_EQ(spec.argv[4], "--job-dir=" + dir);
  EXPECT_EQ(spec.log_path, dir + "/job.log");
  EXPECT_EQ(Env(spec, "CAIRN_SERVER"), "127.0.0.1:9");
  EXPECT_EQ(Env(spec, "CAIRN_STUDY"), study);
  EXPECT_EQ(Env(spec, "CAIRN_TRIAL_ID"), "1");
  EXPECT_EQ(Env(spec, "CAIRN_JOB_DIR"), dir);
  EXPECT_EQ(Env(spec, "CAIRN_RESUME"), "<unset>");
  EXPECT_EQ(Env(spec, "CLOUD_ML_TRIAL_ID"), "1");
  EXPECT_EQ(Env(spec, "CLOUD_ML_HP_METRIC_FILE"), dir + "/hypertune.metrics");
  EXPECT_EQ(Env(spec, "CUDA_VISIBLE_DEVICES"), "");
  EXPECT_NE(Env(spec, "TF_CONFIG").find("\"trial\":\"1\""), std::string::npos)
      << Env(spec, "TF_CONFIG");
  std::ifstream log(spec.log_path);
  std::string line;
  ASSERT_TRUE(std::getline(log, line));
  EXPECT_EQ(
      line.rfind("=== cairn: attempt 1 of trial " + study + "/trials/1", 0), 0u)
      << line;
  const JobCounts counts = runner_->Counts();
  EXPECT_EQ(counts.running, 2);
  EXPECT_EQ(counts.queued, 0);
}

TEST_F(JobRunnerUnitTest, GpuSlotsAreExclusiveAndFreedOnExit) {
  const std::string study = CreateStudy(
      "max_trials: 3 max_parallel_trials: 3 job_template { gpus_per_trial: 1 "
      "}");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/2));
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(Env(starts[0].spec, "CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(Env(starts[1].spec, "CUDA_VISIBLE_DEVICES"), "1");
  EXPECT_EQ(Get(study + "/trials/3").job().state(), TrialJob::QUEUED);
  JobCounts counts = runner_->Counts();
  EXPECT_EQ(counts.running, 2);
  EXPECT_EQ(counts.queued, 1);
  EXPECT_EQ(counts.gpus_in_use, 2);
  EXPECT_EQ(counts.gpus_total, 2);

  // Trial 2 (GPU 1) finishes: trial 3 gets GPU 1 in the same pass.
  Report(study + "/trials/2", 0.5, 1);
  executor_.Exit(starts[1].handle.pid, 0);
  runner_->RunOnce();
  const Trial done = Get(study + "/trials/2");
  EXPECT_EQ(done.state(), Trial::SUCCEEDED);
  EXPECT_EQ(done.job().state(), TrialJob::SUCCEEDED);
  EXPECT_EQ(done.job().message(), "exit code 0");
  EXPECT_EQ(done.job().pid(), 0);
  ASSERT_EQ(executor_.starts().size(), 3u);
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_TRIAL_ID"), "3");
  EXPECT_EQ(Env(executor_.last_start().spec, "CUDA_VISIBLE_DEVICES"), "1");
  counts = runner_->Counts();
  EXPECT_EQ(counts.running, 2);
  EXPECT_EQ(counts.queued, 0);
}

TEST_F(JobRunnerUnitTest, HypertuneMetricsAreCollectedAndTheLastBecomesFinal) {
  const std::string study = CreateStudy("max_trials: 1");
  ASSERT_EQ(FirstPass(Options()).size(), 1u);
  const FakeExecutor::Started job = executor_.last_start();
  {
    std::ofstream out(Env(job.spec, "CLOUD_ML_HP_METRIC_FILE"));
    out << R"({"global_step": "1", "loss": "0.9", "timestamp": 10.5})"
        << "\n"
        << R"({"global_step": "2", "loss": "0.4", "timestamp": 11.5})"
        << "\n";
  }
  runner_->RunOnce();
  auto with_measurements = manager_->GetTrial(study + "/trials/1");
  ASSERT_TRUE(with_measurements.ok());
  EXPECT_EQ(with_measurements->measurements_size(), 2);
  EXPECT_EQ(with_measurements->job().hypertune_timestamp(), 11.5);

  executor_.Exit(job.handle.pid, 0);
  runner_->RunOnce();
  const Trial t = Get(study + "/trials/1");
  EXPECT_EQ(t.state(), Trial::SUCCEEDED);
  EXPECT_EQ(t.final_measurement().step_count(), 2);
  EXPECT_DOUBLE_EQ(t.final_measurement().metrics(0).value(), 0.4);
}

TEST_F(JobRunnerUnitTest, ExitZeroWithoutMeasurementsFailsTheTrial) {
  const std::string study = CreateStudy("max_trials: 1");
  NewRunner(Options());
  runner_->RunOnce();
  executor_.Exit(executor_.last_start().handle.pid, 0);
  runner_->RunOnce();
  const Trial t = Get(study + "/trials/1");
  EXPECT_EQ(t.state(), Trial::FAILED);
  EXPECT_EQ(t.job().state(), TrialJob::FAILED);
  EXPECT_EQ(t.job().message().rfind("exit code 0 but ", 0), 0u)
      << t.job().message();
}

TEST_F(JobRunnerUnitTest, FailedJobRestartsUpToMaxRestartsAfterBackoff) {
  const std::string study =
      CreateStudy("max_trials: 1 job_template { max_restarts: 2 }");
  const std::string trial = study + "/trials/1";
  ASSERT_EQ(FirstPass(Options()).size(), 1u);
  const std::string job_dir = Get(trial).job().job_dir();

  // Attempt 1 fails: restart 1 waits 1 s, attempt 2 resumes.
  executor_.Exit(executor_.last_start().handle.pid, 3);
  runner_->RunOnce();
  Trial t = Get(trial);
  EXPECT_EQ(t.state(), Trial::ACTIVE);
  EXPECT_EQ(t.job().state(), TrialJob::QUEUED);
  EXPECT_EQ(t.job().restarts(), 1);
  EXPECT_EQ(t.job().last_exit_code(), 3);
  EXPECT_EQ(t.job().message(), "exit code 3; restart 1 of 2");
  EXPECT_EQ(executor_.starts().size(), 1u) << "restarted without backoff";
  EXPECT_EQ(StartsAfter(absl::Milliseconds(999)), 1u) << "restarted before 1 s";
  ASSERT_EQ(StartsAfter(absl::Milliseconds(1)), 2u);
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_RESUME"), "1");
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_JOB_DIR"), job_dir);
  EXPECT_EQ(Get(trial).job().attempts(), 2);
  EXPECT_EQ(Get(trial).job().state(), TrialJob::RUNNING);

  // Attempt 2 fails: restart 2 waits 2 s.
  executor_.Exit(executor_.last_start().handle.pid, 3);
  runner_->RunOnce();
  EXPECT_EQ(StartsAfter(absl::Milliseconds(1999)), 2u)
      << "restarted before 2 s";
  ASSERT_EQ(StartsAfter(absl::Milliseconds(1)), 3u);

  // Attempt 3 is killed: no restarts left, the trial fails.
  executor_.Exit(executor_.last_start().handle.pid, 0, /*signal=*/9);
  runner_->RunOnce();
  t = Get(trial);
  EXPECT_EQ(t.state(), Trial::FAILED);
  EXPECT_EQ(t.job().state(), TrialJob::FAILED);
  EXPECT_EQ(t.job().restarts(), 2);
  EXPECT_EQ(t.job().attempts(), 3);
  EXPECT_EQ(t.job().last_exit_code(), 128 + 9);
  EXPECT_EQ(t.job().message(), "killed by signal 9 after 2 restart(s)");
  EXPECT_EQ(t.infeasible_reason(),
            "job failed: killed by signal 9 after 2 restart(s)");
  EXPECT_EQ(StartsAfter(absl::Minutes(5)), 3u);
  EXPECT_EQ(runner_->Counts().restarts_total, 2);
  EXPECT_EQ(restarts_.studies(), (std::vector<std::string>{study, study}));
}

TEST_F(JobRunnerUnitTest, UsageErrorExitFailsAtOnceWithoutRestart) {
  const std::string study = CreateStudy(
      "max_trials: 3 max_parallel_trials: 3 job_template { max_restarts: 3 }");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options());
  ASSERT_EQ(starts.size(), 3u);
  executor_.Exit(starts[0].handle.pid, 2);
  executor_.Exit(starts[1].handle.pid, 78);
  executor_.Exit(starts[2].handle.pid, 1);  // Retried.
  runner_->RunOnce();
  for (const std::string id : {"1", "2"}) {
    const Trial t = Get(study + "/trials/" + id);
    EXPECT_EQ(t.state(), Trial::FAILED) << id;
    EXPECT_EQ(t.job().state(), TrialJob::FAILED) << id;
    EXPECT_EQ(t.job().restarts(), 0) << id;
    EXPECT_NE(t.job().message().find("usage or configuration error"),
              std::string::npos)
        << t.job().message();
  }
  EXPECT_EQ(Get(study + "/trials/3").job().restarts(), 1);
  ASSERT_EQ(StartsAfter(absl::Minutes(5)), 4u);
  EXPECT_EQ(Env(executor_.last_start().spec, "CAIRN_TRIAL_ID"), "3");
}

TEST_F(JobRunnerUnitTest, ResumedAttemptDropsStepsAlreadyStored) {
  const std::string study =
      CreateStudy("max_trials: 1 job_template { max_restarts: 1 }");
  const std::string trial = study + "/trials/1";
  ASSERT_EQ(FirstPass(Options()).size(), 1u);
  const std::string metrics =
      Env(executor_.last_start().spec, "CLOUD_ML_HP_METRIC_FILE");
  {
    std::ofstream out(metrics);
    out << R"({"global_step": "1", "loss": "0.9", "timestamp": 10.5})"
        << "\n"
        << R"({"global_step": "2", "loss": "0.8", "timestamp": 11.5})"
        << "\n";
  }
  executor_.Exit(executor_.last_start().handle.pid, 0, /*signal=*/9);
  runner_->RunOnce();
  ASSERT_EQ(StartsAfter(absl::Seconds(1)), 2u);

  // The resumed attempt restarts from its step-1 checkpoint: it reports
  // steps 2 (already stored: dropped) and 3 in a rewritten file.
  {
    std::ofstream out(metrics);
    out << R"({"global_step": "2", "loss": "0.7", "timestamp": 20.5})"
        << "\n"
        << R"({"global_step": "3", "loss": "0.6", "timestamp": 21.5})"
        << "\n";
  }
  runner_->RunOnce();
  auto t = manager_->GetTrial(trial);
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<int64_t> steps;
  for (const auto& m : t->measurements()) steps.push_back(m.step_count());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(t->measurements(1).metrics(0).value(), 0.8);
  EXPECT_EQ(t->job().hypertune_timestamp(), 21.5);
}

TEST_F(JobRunnerUnitTest, ResumedAttemptDropsRepeatedStepsReportedByRpc) {
  const std::string study =
      CreateStudy("max_trials: 1 job_template { max_restarts: 1 }");
  const std::string trial = study + "/trials/1";
  ASSERT_EQ(FirstPass(Options()).size(), 1u);
  // The first attempt may report any steps: a repeat is stored.
  Report(trial, 0.9, 1);
  Report(trial, 0.8, 2);
  Report(trial, 0.85, 2);
  executor_.Exit(executor_.last_start().handle.pid, 0, /*signal=*/9);
  runner_->RunOnce();
  ASSERT_EQ(StartsAfter(absl::Seconds(1)), 2u);

  // The resumed attempt reports (through AddTrialMeasurement) steps 1 and 2
  // again, then 3: the repeats are acknowledged and dropped.
  Report(trial, 0.7, 1);
  Report(trial, 0.7, 2);
  Report(trial, 0.6, 3);
  Report(trial, 0.65, 3);
  auto t = manager_->GetTrial(trial);
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<int64_t> steps;
  for (const auto& m : t->measurements()) steps.push_back(m.step_count());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 2, 3}));
  EXPECT_DOUBLE_EQ(t->measurements(3).metrics(0).value(), 0.6);
}

TEST_F(JobRunnerUnitTest, JobStudyFailsByDefaultWhenItsFirstTrialsFail) {
  const std::string study =
      CreateStudy("max_trials: 20 max_parallel_trials: 3");
  std::vector<FakeExecutor::Started> starts = FirstPass(Options());
  ASSERT_EQ(starts.size(), 3u);
  for (const auto& s : starts) executor_.Exit(s.handle.pid, 1);
  runner_->RunOnce();
  auto got = manager_->GetStudy(study);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), Study::FAILED);
  EXPECT_EQ(got->inactive_reason(),
            "the first 3 trials all failed (default failure policy)");
  EXPECT_EQ(StartsAfter(absl::Minutes(5)), 3u) << "a FAILED study ran more";
}

TEST_F(JobRunnerUnitTest, BackoffDoublesUpToItsCap) {
  CreateStudy("max_trials: 1 job_template { max_restarts: 5 }");
  JobRunnerOptions options = Options();
  options.restart_backoff_initial = absl::Seconds(1);
  options.restart_backoff_multiplier = 2;
  options.restart_backoff_max = absl::Seconds(3);
  NewRunner(options);
  runner_->RunOnce();
  const std::vector<absl::Duration> delays = {
      absl::Seconds(1), absl::Seconds(2), absl::Seconds(3), absl::Seconds(3),
      absl::Seconds(3)};
  for (size_t i = 0; i < delays.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("restart ", i + 1));
    ASSERT_EQ(executor_.starts().size(), i + 1);
    executor_.Exit(executor_.last_start().handle.pid, 1);
    runner_->RunOnce();
    EXPECT_EQ(StartsAfter(delays[i] - absl::Milliseconds(1)), i + 1)
        << "restarted early";
    EXPECT_EQ(StartsAfter(absl::Milliseconds(1)), i + 2)
        << "not restarted on time";
  }
}

TEST_F(JobRunnerUnitTest, TimeoutTerminatesWithTheGracePeriodAndFails) {
  const std::string study = CreateStudy(
      "max_trials: 1 job_template { max_restarts: 3 "
      "max_running_time { seconds: 10 } }");
  const std::string trial = study + "/trials/1";
  NewRunner(Options());
  runner_->RunOnce();
  const int64_t pid = executor_.last_start().handle.pid;
  clock_.Advance(absl::Seconds(10));
  runner_->RunOnce();
  EXPECT_TRUE(executor_.terminates().empty()) << "terminated at the limit";
  clock_.Advance(absl::Milliseconds(1));
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  EXPECT_EQ(executor_.terminates()[0].first, pid);
  EXPECT_EQ(executor_.terminates()[0].second, absl::Seconds(7));
  EXPECT_EQ(Get(trial).job().state(), TrialJob::STOPPING);
  EXPECT_EQ(Get(trial).job().message(), "timeout");
  runner_->RunOnce();
  EXPECT_EQ(executor_.terminates().size(), 1u) << "terminated twice";

  executor_.Exit(pid, 0, /*signal=*/15);
  runner_->RunOnce();
  const Trial t = Get(trial);
  EXPECT_EQ(t.state(), Trial::FAILED);
  EXPECT_EQ(t.job().state(), TrialJob::FAILED);
  EXPECT_EQ(t.job().last_exit_code(), 143);
  EXPECT_NE(t.infeasible_reason().find("timeout"), std::string::npos)
      << t.infeasible_reason();
  EXPECT_EQ(StartsAfter(absl::Minutes(5)), 1u) << "a timeout is not restarted";
}

TEST_F(JobRunnerUnitTest, TimeoutClockStartsWhenTheQueuedJobRuns) {
  const std::string study = CreateStudy(
      "max_trials: 1 job_template { max_running_time { seconds: 10 } }");
  NewRunner(Options());
  runner_->RunOnce();
  const int64_t pid = executor_.last_start().handle.pid;
  executor_.SetQueued(pid, true);
  clock_.Advance(absl::Minutes(5));  // Pending in the cluster's queue.
  runner_->RunOnce();
  executor_.SetQueued(pid, false);
  clock_.Advance(absl::Seconds(9));
  runner_->RunOnce();
  EXPECT_TRUE(executor_.terminates().empty())
      << "time in the queue counted as running time";
  clock_.Advance(absl::Seconds(2));
  runner_->RunOnce();
  ASSERT_EQ(executor_.terminates().size(), 1u);
  EXPECT_EQ(Get(study + "/trials/1").job().message(), "timeout");
}

TEST_F(JobRunnerUnitTest, ExecutorStartFailureFailsTheTrialAndFreesItsGpu) {
  const std::string study =
      CreateStudy("max_trials: 1 job_template { gpus_per_trial: 1 }");
  executor_.FailStarts(true);
  NewRunner(Options(/*gpus=*/1));
  runner_->RunOnce();
  const Trial t = Get(study + "/trials/1");
  EXPECT_EQ(t.state(), Trial::FAILED);
  EXPECT_EQ(t.infeasible_reason(), "command: cannot execute 'fake'");
  EXPECT_EQ(t.job().state(), TrialJob::FAILED);
  EXPECT_EQ(t.job().attempts(), 1);
  EXPECT_EQ(runner_->Counts().gpus_in_use, 0);
}

TEST_F(JobRunnerUnitTest, RestartedCairndKillsTheOrphanAndResumesTheTrial) {
  const std::string study = CreateStudy("max_trials: 1");
  const std::string trial = study + "/trials/1";
  NewRunner(Options());
  runner_->RunOnce();
  const JobHandle orphan = executor_.last_start().handle;
  Report(trial, 0.7, 1);
  ASSERT_EQ(Get(trial).job().state(), TrialJob::RUNNING);

  // cairnd dies with the job running; a new one opens the same store.
  OpenManager();
  FakeExecutor executor2;
  NewRunner(Options(), &executor2);  // Recover()s.
  EXPECT_EQ(executor2.orphans(), (std::vector<std::pair<int64_t, int64_t>>{
                                     {orphan.pid, orphan.start_ticks}}));
  Trial t = Get(trial);
  EXPECT_EQ(t.job().state(), TrialJob::QUEUED);
  EXPECT_EQ(t.job().pid(), 0);
  EXPECT_EQ(t.job().message(), "orphan of a previous cairnd killed; resuming");

  runner_->RunOnce();
  ASSERT_EQ(executor2.starts().size(), 1u);
  const JobSpec& spec = executor2.last_start().spec;
  EXPECT_EQ(Env(spec, "CAIRN_RESUME"), "1");
  EXPECT_EQ(Env(spec, "CAIRN_TRIAL_ID"), "1");
  t = Get(trial);
  EXPECT_EQ(t.state(), Trial::ACTIVE);
  EXPECT_EQ(t.job().state(), TrialJob::RUNNING);
  EXPECT_EQ(t.job().attempts(), 2);
  EXPECT_EQ(t.job().restarts(), 0);
  EXPECT_EQ(t.job().pid(), executor2.last_start().handle.pid);
  runner_.reset();  // Before executor2 goes.
}

// Routes spdlog's default logger into memory while alive.
class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)),
        saved_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(saved_); }
  // The lines that start with "job `trial`: ".
  std::vector<std::string> JobLines(const std::string& trial) {
    std::vector<std::string> out;
    const std::string prefix = "job " + trial + ": ";
    for (const std::string& line : sink_->last_formatted()) {
      const size_t at = line.find(prefix);
      if (at == std::string::npos) continue;
      std::string rest = line.substr(at + prefix.size());
      while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) {
        rest.pop_back();
      }
      out.push_back(rest);
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> saved_;
};

TEST_F(JobRunnerUnitTest, EveryJobEventIsOneLogLine) {
  CapturedLog log;
  const std::string study = CreateStudy(
      "max_trials: 1 job_template { max_restarts: 1 "
      "max_running_time { seconds: 10 } }");
  const std::string trial = study + "/trials/1";
  NewRunner(Options());
  runner_->RunOnce();
  executor_.Exit(100, 0, /*signal=*/9);
  runner_->RunOnce();
  ASSERT_EQ(StartsAfter(absl::Seconds(1)), 2u);
  StartsAfter(absl::Seconds(11));  // Timeout.
  executor_.Exit(101, 0, /*signal=*/15);
  runner_->RunOnce();
  EXPECT_EQ(log.JobLines(trial),
            (std::vector<std::string>{
                "queued (needs 0 GPU(s))",
                "started attempt 1 (pid 100, GPUs [])",
                "pid 100 exited: killed by signal 9",
                "restarting in 1s (restart 1 of 1, attempt 2)",
                "started attempt 2, resuming (pid 101, GPUs [])",
                "killing pid 101 (timeout): SIGTERM, SIGKILL after 7s",
                "pid 101 exited: killed by signal 15",
            }));
}

TEST_F(JobRunnerUnitTest, ResumeAfterCairndRestartIsLogged) {
  const std::string study = CreateStudy("max_trials: 1");
  NewRunner(Options());
  runner_->RunOnce();
  CapturedLog log;
  OpenManager();
  FakeExecutor executor2;
  NewRunner(Options(), &executor2);
  runner_->RunOnce();
  EXPECT_EQ(log.JobLines(study + "/trials/1"),
            (std::vector<std::string>{
                "resumed after a cairnd restart (orphan pid 100 killed; "
                "queued again)",
                "started attempt 2, resuming (pid 100, GPUs [])",
            }));
  runner_.reset();  // Before executor2 goes.
}

TEST_F(JobRunnerUnitTest, LoopThreadRunsPassesUntilStopped) {
  CreateStudy("max_trials: 3 max_parallel_trials: 2");
  JobRunnerOptions options = Options();
  options.poll_interval = absl::Milliseconds(1);
  runner_ =
      std::make_unique<JobRunner>(manager_.get(), &executor_, &clock_, options);
  runner_->Start();
  ASSERT_TRUE(executor_.AwaitStarts(2));
  runner_->Stop();
  runner_->Stop();  // Idempotent.
  EXPECT_EQ(executor_.starts().size(), 2u);
  EXPECT_EQ(runner_->Counts().running, 2);
}

// --- Multi-replica trials (job_template.replicas). ---

constexpr char kReplicas[] =
    "max_trials: 1 job_template { max_restarts: 2 "
    "replicas { type: MASTER count: 1 gpus_per_replica: 1 } "
    "replicas { type: WORKER count: 2 gpus_per_replica: 1 } "
    "replicas { type: PARAMETER_SERVER count: 1 } "
    "tf_config_job_json: '{\"scaleTier\": \"CUSTOM\"}' "
    "ai_platform_job_id: 'census_1' }";

TEST_F(JobRunnerUnitTest, ReplicasEachStartWithTheirOwnEnvironment) {
  const std::string study = CreateStudy(kReplicas);
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/3));
  ASSERT_EQ(starts.size(), 4u);
  // An AI Platform job's study (ai_platform_job_id set): JOB_DIR/TRIAL_ID.
  const std::string dir = dir_.path() + "/jobs/study-1/1";
  const std::vector<std::string> names = {"master-replica-0",
                                          "worker-replica-0",
                                          "worker-replica-1", "ps-replica-0"};
  const nlohmann::json cluster =
      nlohmann::json::parse(Env(starts[0].spec, "TF_CONFIG"))["cluster"];
  EXPECT_EQ(cluster["worker"].size(), 2u);
  EXPECT_EQ(cluster["ps"].size(), 1u);
  for (size_t i = 0; i < starts.size(); ++i) {
    const JobSpec& spec = starts[i].spec;
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(spec.argv, starts[0].spec.argv);
    EXPECT_EQ(Env(spec, "CAIRN_REPLICA"), names[i]);
    EXPECT_EQ(Env(spec, "CLOUD_ML_JOB_ID"), "census_1");
    EXPECT_EQ(Env(spec, "CLOUD_ML_TRIAL_ID"), "1");
    EXPECT_EQ(Env(spec, "CLOUD_ML_HP_METRIC_TAG"), "loss");
    const nlohmann::json tf = nlohmann::json::parse(Env(spec, "TF_CONFIG"));
    EXPECT_EQ(tf["cluster"], cluster) << "one cluster for all";
    EXPECT_EQ(tf["job"]["scaleTier"], "CUSTOM");
    EXPECT_EQ(Env(spec, "WORLD_SIZE"), "3");
    EXPECT_EQ(Env(spec, "MASTER_PORT"),
              cluster["master"][0].get<std::string>().substr(10));
    if (i == 0) {
      EXPECT_EQ(spec.log_path, dir + "/job.log");
      EXPECT_EQ(Env(spec, "CAIRN_SERVER"), "127.0.0.1:9");
      EXPECT_EQ(Env(spec, "CLOUD_ML_HP_METRIC_FILE"),
                dir + "/hypertune.metrics");
    } else {
      EXPECT_EQ(spec.log_path, dir + "/" + names[i] + ".log");
      EXPECT_EQ(Env(spec, "CAIRN_SERVER"), "<unset>") << "only the master "
                                                         "reports";
      EXPECT_EQ(Env(spec, "CLOUD_ML_HP_METRIC_FILE"),
                dir + "/" + names[i] + ".hypertune.metrics");
    }
  }
  EXPECT_EQ(Env(starts[1].spec, "RANK"), "1");
  EXPECT_EQ(Env(starts[3].spec, "RANK"), "<unset>");
  EXPECT_EQ(Env(starts[0].spec, "CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(Env(starts[2].spec, "CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(Env(starts[3].spec, "CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(runner_->Counts().gpus_in_use, 3);
  const TrialJob job = Get(study + "/trials/1").job();
  ASSERT_EQ(job.replica_processes_size(), 4);
  EXPECT_EQ(job.pid(), starts[0].handle.pid);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(job.replica_processes(i).name(), names[i]);
    EXPECT_EQ(job.replica_processes(i).pid(), starts[i].handle.pid);
    EXPECT_EQ(job.replica_processes(i).proc_start_ticks(),
              starts[i].handle.start_ticks);
  }
}

TEST_F(JobRunnerUnitTest, MasterExitStopsTheOtherReplicasThenCompletes) {
  const std::string study = CreateStudy(kReplicas);
  const std::string trial = study + "/trials/1";
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/3));
  ASSERT_EQ(starts.size(), 4u);
  Report(trial, 0.4, 5);
  executor_.Exit(starts[0].handle.pid, 0);
  runner_->RunOnce();
  std::set<int64_t> stopped;
  for (const auto& [pid, grace] : executor_.terminates()) {
    stopped.insert(pid);
    EXPECT_EQ(grace, absl::Seconds(7));
  }
  EXPECT_EQ(stopped,
            (std::set<int64_t>{starts[1].handle.pid, starts[2].handle.pid,
                               starts[3].handle.pid}));
  EXPECT_EQ(Get(trial).state(), Trial::ACTIVE) << "until every replica ended";
  EXPECT_EQ(runner_->Counts().gpus_in_use, 3);
  for (int i = 1; i < 4; ++i) {
    executor_.Exit(starts[i].handle.pid, 0, /*signal=*/15);
  }
  runner_->RunOnce();
  const Trial t = Get(trial);
  EXPECT_EQ(t.state(), Trial::SUCCEEDED);
  EXPECT_EQ(t.job().state(), TrialJob::SUCCEEDED);
  EXPECT_EQ(t.job().replica_processes_size(), 0);
  EXPECT_EQ(runner_->Counts().gpus_in_use, 0);
  EXPECT_EQ(runner_->Counts().restarts_total, 0);
}

TEST_F(JobRunnerUnitTest, WorkerDeathRestartsTheWholeGroupCountedOnce) {
  const std::string study = CreateStudy(kReplicas);
  const std::string trial = study + "/trials/1";
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/3));
  ASSERT_EQ(starts.size(), 4u);
  executor_.Exit(starts[2].handle.pid, 0, /*signal=*/9);
  runner_->RunOnce();
  EXPECT_EQ(executor_.terminates().size(), 3u) << "the rest are stopped";
  for (int i : {0, 1, 3}) executor_.Exit(starts[i].handle.pid, 0, 15);
  runner_->RunOnce();
  Trial t = Get(trial);
  EXPECT_EQ(t.state(), Trial::ACTIVE);
  EXPECT_EQ(t.job().state(), TrialJob::QUEUED);
  EXPECT_EQ(t.job().restarts(), 1);
  EXPECT_EQ(t.job().last_exit_code(), 128 + 9);
  EXPECT_EQ(t.job().message(),
            "worker-replica-1 killed by signal 9; restart 1 of 2");
  ASSERT_EQ(StartsAfter(absl::Seconds(1)), 8u) << "the whole group restarts";
  for (size_t i = 4; i < 8; ++i) {
    EXPECT_EQ(Env(executor_.starts()[i].spec, "CAIRN_RESUME"), "1");
  }
  EXPECT_EQ(Get(trial).job().attempts(), 2);
  EXPECT_EQ(runner_->Counts().restarts_total, 1);
  EXPECT_EQ(restarts_.studies(), (std::vector<std::string>{study}));
}

TEST_F(JobRunnerUnitTest, StoppedStudyStopsEveryReplica) {
  const std::string study = CreateStudy(kReplicas);
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/3));
  ASSERT_EQ(starts.size(), 4u);
  ASSERT_TRUE(manager_->SetStudyState(study, Study::INACTIVE).ok());
  runner_->RunOnce();
  std::set<int64_t> stopped;
  for (const auto& [pid, grace] : executor_.terminates()) stopped.insert(pid);
  EXPECT_EQ(stopped.size(), 4u);
  for (const auto& s : starts) executor_.Exit(s.handle.pid, 0, 15);
  runner_->RunOnce();
  EXPECT_EQ(Get(study + "/trials/1").job().state(), TrialJob::CANCELLED);
  EXPECT_EQ(runner_->Counts().running, 0);
}

TEST_F(JobRunnerUnitTest, RestartedCairndKillsEveryReplicaOrphan) {
  const std::string study = CreateStudy(kReplicas);
  std::vector<FakeExecutor::Started> starts = FirstPass(Options(/*gpus=*/3));
  ASSERT_EQ(starts.size(), 4u);
  OpenManager();
  FakeExecutor executor2;
  NewRunner(Options(/*gpus=*/3), &executor2);
  std::vector<std::pair<int64_t, int64_t>> want;
  for (const auto& s : starts) {
    want.emplace_back(s.handle.pid, s.handle.start_ticks);
  }
  EXPECT_EQ(executor2.orphans(), want);
  const TrialJob job = Get(study + "/trials/1").job();
  EXPECT_EQ(job.state(), TrialJob::QUEUED);
  EXPECT_EQ(job.replica_processes_size(), 0);
  runner_->RunOnce();
  EXPECT_EQ(executor2.starts().size(), 4u) << "the group resumes";
  runner_.reset();  // Before executor2 goes.
}

}  // namespace
}  // namespace cairn::jobs
