// Metrics parsed from a job's log (AttemptHooks::PollMetrics, here the real
// SageMaker MetricDefinitions follower sagemaker/log_metrics.h, whose steps
// count matching lines from 1 in each attempt) keep rising across a
// restart: a real shell job prints two metric lines and is killed, its
// resumed attempt prints two more and exits 0, and the trial ends with
// steps 1..4 (before the runner's step base it stored 1, 2, 1, 2).
#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "jobs/attempt_hooks.h"
#include "jobs/executor.h"
#include "jobs/job_runner.h"
#include "sagemaker/log_metrics.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "util/clock.h"

namespace cairn::jobs {
namespace {

// Follows each attempt's log from where it stood when the attempt started.
class LogMetricHooks : public AttemptHooks {
 public:
  absl::Status BeforeStart(const cairn::v1::Study&,
                           const cairn::v1::Trial& trial, const std::string&,
                           std::vector<JobSpec>& specs) override {
    cairn::v1::SageMakerAlgorithmSpecification algorithm;
    auto* def = algorithm.add_metric_definitions();
    def->set_name("loss");
    def->set_regex("loss=([0-9.]+)");
    struct stat st;
    const int64_t size =
        stat(specs[0].log_path.c_str(), &st) == 0 ? st.st_size : 0;
    absl::StatusOr<sagemaker::LogMetrics> watch =
        sagemaker::LogMetrics::Create(algorithm, specs[0].log_path, size);
    if (!watch.ok()) return watch.status();
    absl::MutexLock lock(&mu_);
    watches_.insert_or_assign(trial.name(), *std::move(watch));
    return absl::OkStatus();
  }

  absl::Status AfterExit(const cairn::v1::Study&, const cairn::v1::Trial&,
                         const std::string&, bool) override {
    return absl::OkStatus();
  }

  std::vector<HypertuneEntry> PollMetrics(
      const std::string& trial_name) override {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(trial_name);
    if (it == watches_.end()) return {};
    return it->second.Poll(
        absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, sagemaker::LogMetrics> watches_ ABSL_GUARDED_BY(mu_);
};

class LogMetricStepsTest : public testing::StudyManagerFixture {};

TEST_F(LogMetricStepsTest, ResumedJobContinuesTheStepsOfItsLogMetrics) {
  // First attempt: two metric lines, then killed by SIGKILL; the resumed
  // attempt (CAIRN_RESUME=1) prints two more and succeeds. printf keeps
  // the lines out of the attempt header, which quotes the command.
  cairn::v1::Study study;
  study.set_display_name("log-steps");
  *study.mutable_spec() = testing::ShellJobSpec(
      "if [ -z \"$CAIRN_RESUME\" ]; then printf 'lo%s=0.9\\nlo%s=0.8\\n' ss "
      "ss; "
      "kill -9 $$; fi; printf 'lo%s=0.7\\nlo%s=0.6\\n' ss ss",
      "job");
  study.mutable_spec()->set_max_trials(1);
  study.mutable_spec()->mutable_job_template()->set_max_restarts(1);
  absl::StatusOr<cairn::v1::Study> created = manager_->CreateStudy(study);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string trial = created->name() + "/trials/1";

  std::unique_ptr<Executor> executor =
      NewLocalProcessExecutor(util::Clock::Real());
  LogMetricHooks hooks;
  JobRunnerOptions options;
  options.jobs_root = dir_.path() + "/jobs";
  options.server_address = "127.0.0.1:9";
  options.gpus = 0;
  options.restart_backoff_initial = absl::ZeroDuration();
  options.hooks = &hooks;
  JobRunner runner(manager_.get(), executor.get(), util::Clock::Real(),
                   options);
  runner.Recover();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  absl::StatusOr<cairn::v1::Trial> t = manager_->GetTrial(trial);
  while (absl::Now() < deadline &&
         (!t.ok() || t->state() != cairn::v1::Trial::SUCCEEDED)) {
    runner.RunOnce();
    absl::SleepFor(absl::Milliseconds(20));
    t = manager_->GetTrial(trial);
  }
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->state(), cairn::v1::Trial::SUCCEEDED) << t->DebugString();
  EXPECT_EQ(t->job().restarts(), 1);
  std::vector<int64_t> steps;
  std::vector<double> values;
  for (const auto& m : t->measurements()) {
    steps.push_back(m.step_count());
    values.push_back(m.metrics(0).value());
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(values, (std::vector<double>{0.9, 0.8, 0.7, 0.6}));
  EXPECT_EQ(t->final_measurement().step_count(), 4);
}

}  // namespace
}  // namespace cairn::jobs
