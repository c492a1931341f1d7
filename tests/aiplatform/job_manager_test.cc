// JobManager over a real RocksDB store and StudyManager (no job runner): a
// crash at each step of a submission (a child process that _exits there,
// as kill -9 would) leaves either nothing, with the job id free again, or
// a complete job whose study runs; a job's study stays paused until
// resumePreviousJobId's trials are in; scheduling.maxWaitTime and
// maxRunningTime cancel jobs with a reason.
#include "aiplatform/job_manager.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aiplatform/job_config.h"
#include "aiplatform/job_schedule.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/manual_clock.h"
#include "tests/testing/test_util.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using cairn::v1::Study;
using cairn::v1::Trial;
using google::protobuf::util::TimeUtil;

PackageFiles Package() {
  PackageFiles files;
  files.Add()->set_path("trainer/__init__.py");
  cairn::v1::PackageFile* task = files.Add();
  task->set_path("trainer/task.py");
  task->set_content("print('training')\n");
  return files;
}

// A job from config text, as `cairn jobs submit training` sends it.
Job MakeJob(const std::string& id, const std::string& yaml) {
  absl::StatusOr<JobConfig> config = ParseJobConfig(yaml);
  EXPECT_TRUE(config.ok()) << config.status();
  Job job = config.ok() ? config->job : Job();
  job.set_job_id(id);
  job.mutable_training_input()->set_python_module("trainer.task");
  return job;
}

Job TuningJob(const std::string& id, const std::string& resume = "") {
  std::string yaml = R"(trainingInput:
  hyperparameters:
    goal: MAXIMIZE
    hyperparameterMetricTag: accuracy
    maxTrials: 2
    params:
    - {parameterName: lr, type: DOUBLE, minValue: 0.01, maxValue: 0.1}
)";
  if (!resume.empty())
    absl::StrAppend(&yaml, "    resumePreviousJobId: ", resume, "\n");
  return MakeJob(id, yaml);
}

// cairnd's parts that jobs need, over the store in `dir`; a new Node after
// an old one's process died is a restart.
class Node {
 public:
  explicit Node(const std::string& dir,
                std::function<void(absl::string_view)> hook = nullptr)
      : dir_(dir) {
    auto store = Store::Open(StoreOptions(), dir + "/db");
    EXPECT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    StudyManagerOptions study_options;
    study_options.clock = &clock_;
    auto studies = StudyManager::Open(store_.get(), study_options);
    EXPECT_TRUE(studies.ok()) << studies.status();
    studies_ = std::move(*studies);
    JobManagerOptions options;
    options.jobs_root = jobs_root();
    options.schedule_interval = absl::ZeroDuration();
    options.submit_hook = std::move(hook);
    auto jobs =
        JobManager::Open(store_.get(), studies_.get(), &clock_, options);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    jobs_ = std::move(*jobs);
  }

  std::string jobs_root() const { return dir_ + "/jobs"; }
  JobManager& jobs() { return *jobs_; }
  StudyManager& studies() { return *studies_; }
  Store& store() { return *store_; }
  testing::ManualClock& clock() { return clock_; }

  // Suggests and completes `n` trials of job `id`'s study, one at a time
  // (maxParallelTrials defaults to 1).
  void RunTrials(const std::string& id, int n) {
    absl::StatusOr<JobManager::Trials> t = jobs_->JobTrials(id);
    ASSERT_TRUE(t.ok()) << t.status();
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<SuggestResult> s =
          studies_->SuggestTrials(t->study_name, 1, "test");
      ASSERT_TRUE(s.ok()) << s.status();
      ASSERT_EQ(s->trials.size(), 1u) << s->message;
      cairn::v1::Measurement m;
      cairn::v1::Metric* metric = m.add_metrics();
      metric->set_metric_id("accuracy");
      metric->set_value(0.5);
      ASSERT_TRUE(
          studies_->CompleteTrial(s->trials[0].name(), m, false, "").ok());
    }
  }

 private:
  const std::string dir_;
  testing::ManualClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> studies_;
  std::unique_ptr<JobManager> jobs_;
};

class SubmitCrashTest : public ::testing::TestWithParam<const char*> {};

// The child runs job "first" and submits "second" (resuming "first") until
// the step under test, where it dies. The restarted node then holds either
// no trace of "second" or all of it, running.
TEST_P(SubmitCrashTest, LeavesNothingOrACompleteRunningJob) {
  const std::string step = GetParam();
  testing::TempDir dir;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    bool armed = false;  // Only the second submission dies.
    Node node(dir.path(), [&](absl::string_view at) {
      if (armed && at == step) _exit(0);
    });
    if (!node.jobs().Submit(TuningJob("first"), Package(), "ann").ok())
      _exit(2);
    node.RunTrials("first", 2);
    armed = true;
    node.jobs()
        .Submit(TuningJob("second", "first"), Package(), "ann")
        .IgnoreError();
    _exit(3);  // The step never came.
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child did not reach " << step;

  Node node(dir.path());
  ASSERT_TRUE(node.jobs().Get("first").ok());
  const std::string staging = node.jobs_root() + "/second.package";
  if (step == "record_written") {
    absl::StatusOr<Job> job = node.jobs().Get("second");
    ASSERT_TRUE(job.ok()) << job.status();
    absl::StatusOr<JobManager::Trials> trials = node.jobs().JobTrials("second");
    ASSERT_TRUE(trials.ok());
    absl::StatusOr<Study> study = node.studies().GetStudy(trials->study_name);
    ASSERT_TRUE(study.ok());
    EXPECT_EQ(study->state(), Study::ACTIVE) << study->inactive_reason();
    EXPECT_EQ(study->spec().max_trials(), 4);  // 2 prior + 2 of its own.
    EXPECT_TRUE(std::filesystem::exists(staging + "/trainer/task.py"));
    return;
  }
  EXPECT_TRUE(absl::IsNotFound(node.jobs().Get("second").status()));
  EXPECT_TRUE(absl::IsNotFound(node.studies().LookupStudy("second").status()));
  EXPECT_FALSE(std::filesystem::exists(staging));
  absl::StatusOr<std::vector<cairn::v1::JobRecord>> records =
      node.store().LoadJobRecords();
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 1u);
  // The id is free again: the client's retry succeeds.
  absl::StatusOr<Job> again =
      node.jobs().Submit(TuningJob("second", "first"), Package(), "ann");
  EXPECT_TRUE(again.ok()) << again.status();
}

INSTANTIATE_TEST_SUITE_P(EveryStep, SubmitCrashTest,
                         ::testing::Values("record_pending", "study_created",
                                           "trials_copied", "record_written"));

TEST(JobManagerTest, StudyIsPausedUntilPriorTrialsAreIn) {
  testing::TempDir dir;
  StudyManager* studies = nullptr;
  std::vector<std::string> seen;
  Node node(dir.path(), [&](absl::string_view at) {
    absl::StatusOr<Study> s = studies->LookupStudy("second");
    if (!s.ok()) return;
    seen.push_back(absl::StrCat(at, " ", Study::State_Name(s->state())));
    absl::StatusOr<SuggestResult> r = studies->SuggestTrials(s->name(), 1, "x");
    EXPECT_TRUE(r.ok() && r->trials.empty()) << "suggested while paused";
  });
  studies = &node.studies();
  ASSERT_TRUE(node.jobs().Submit(TuningJob("first"), Package(), "ann").ok());
  node.RunTrials("first", 2);
  absl::StatusOr<Job> second =
      node.jobs().Submit(TuningJob("second", "first"), Package(), "ann");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(seen, (std::vector<std::string>{"study_created INACTIVE",
                                            "trials_copied INACTIVE",
                                            "record_written INACTIVE"}));
  absl::StatusOr<Study> study = node.studies().LookupStudy("second");
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(study->state(), Study::ACTIVE);
  node.RunTrials("second", 1);
  absl::StatusOr<TrialPage> page =
      node.studies().ListTrials(study->name(), 0, "", false);
  ASSERT_TRUE(page.ok());
  const std::vector<Trial>& trials = page->trials;
  ASSERT_EQ(trials.size(), 3u);  // The job's own trial comes last.
  EXPECT_EQ(trials[0].labels().at("aiplatform_prior_job"), "first");
  EXPECT_EQ(trials[1].labels().at("aiplatform_prior_job"), "first");
  EXPECT_EQ(trials[2].labels().count("aiplatform_prior_job"), 0u);
}

TEST(JobManagerTest, MaxWaitTimeCancelsAJobThatNeverRan) {
  testing::TempDir dir;
  Node node(dir.path());
  ASSERT_TRUE(node.jobs()
                  .Submit(MakeJob("waits",
                                  "trainingInput:\n  scheduling: "
                                  "{maxWaitTime: 1800s}\n"),
                          Package(), "ann")
                  .ok());
  ASSERT_TRUE(
      node.jobs()
          .Submit(MakeJob("free", "trainingInput: {scaleTier: BASIC}\n"),
                  Package(), "ann")
          .ok());
  node.clock().Advance(absl::Seconds(1799));
  EXPECT_EQ(node.jobs().EnforceSchedule(), 0);
  node.clock().Advance(absl::Seconds(2));
  EXPECT_EQ(node.jobs().EnforceSchedule(), 1);
  absl::StatusOr<Job> job = node.jobs().Get("waits");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), Job::CANCELLED);
  EXPECT_EQ(job->error_message(),
            "the job waited longer than scheduling.maxWaitTime (30m) without "
            "running");
  EXPECT_EQ(node.jobs().Get("free")->state(), Job::QUEUED);
  EXPECT_EQ(node.jobs().EnforceSchedule(), 0);  // Cancelled once.
}

TEST(JobManagerTest, ListsInPagesByJobId) {
  testing::TempDir dir;
  Node node(dir.path());
  for (const char* id : {"c_job", "a_job", "b_job"}) {
    ASSERT_TRUE(node.jobs()
                    .Submit(MakeJob(id, "trainingInput: {scaleTier: BASIC}\n"),
                            Package(), "ann")
                    .ok());
  }
  ASSERT_TRUE(node.jobs().Cancel("b_job").ok());
  auto ids = [](const JobManager::JobPage& page) {
    std::vector<std::string> out;
    for (const Job& job : page.jobs) out.push_back(job.job_id());
    return out;
  };
  absl::StatusOr<JobManager::JobPage> all =
      node.jobs().List(JobFilter(Job::STATE_UNSPECIFIED));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(ids(*all), (std::vector<std::string>{"a_job", "b_job", "c_job"}));
  EXPECT_EQ(all->next_page_token, "");
  absl::StatusOr<JobManager::JobPage> first =
      node.jobs().List(JobFilter(Job::STATE_UNSPECIFIED), 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(ids(*first), (std::vector<std::string>{"a_job", "b_job"}));
  EXPECT_EQ(first->next_page_token, "b_job");
  absl::StatusOr<JobManager::JobPage> second = node.jobs().List(
      JobFilter(Job::STATE_UNSPECIFIED), 2, first->next_page_token);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ids(*second), (std::vector<std::string>{"c_job"}));
  EXPECT_EQ(second->next_page_token, "");
  absl::StatusOr<JobManager::JobPage> queued =
      node.jobs().List(JobFilter(Job::QUEUED));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(ids(*queued), (std::vector<std::string>{"a_job", "c_job"}));
  EXPECT_EQ(node.jobs().List(JobFilter(Job::QUEUED), -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JobScheduleTest, RunningPastMaxRunningTimeIsCancelled) {
  Job job =
      MakeJob("j", "trainingInput:\n  scheduling: {maxRunningTime: 2s}\n");
  const absl::Time start = absl::FromUnixSeconds(1'700'000'000);
  *job.mutable_create_time() = TimeUtil::SecondsToTimestamp(1'699'999'000);
  *job.mutable_start_time() = TimeUtil::SecondsToTimestamp(1'700'000'000);
  job.set_state(Job::RUNNING);
  EXPECT_EQ(ScheduleViolation(job, start + absl::Seconds(2)), "");
  EXPECT_EQ(ScheduleViolation(job, start + absl::Seconds(3)),
            "the job ran longer than scheduling.maxRunningTime (2s)");
  job.set_state(Job::SUCCEEDED);
  EXPECT_EQ(ScheduleViolation(job, start + absl::Hours(1)), "");
  // Without maxRunningTime: 7 days.
  job.set_state(Job::RUNNING);
  job.mutable_training_input()->clear_scheduling();
  EXPECT_EQ(ScheduleViolation(job, start + absl::Hours(167)), "");
  EXPECT_NE(ScheduleViolation(job, start + absl::Hours(169)), "");
  // maxWaitTime does not apply to a running job.
  job.mutable_training_input()
      ->mutable_scheduling()
      ->mutable_max_wait_time()
      ->set_seconds(1800);
  EXPECT_EQ(ScheduleViolation(job, start + absl::Hours(2)), "");
}

TEST(JobScheduleTest, RefusesTimesOutOfRange) {
  cairn::v1::Scheduling s;
  s.mutable_max_wait_time()->set_seconds(60);
  absl::Status status = ValidateScheduling(s);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "trainingInput.scheduling.maxWaitTime: 60s is less than 1800s, its "
            "least value");
  s.clear_max_wait_time();
  s.mutable_max_running_time()->set_seconds(0);
  EXPECT_EQ(ValidateScheduling(s).message(),
            "trainingInput.scheduling.maxRunningTime: 0s must be positive");
  s.mutable_max_running_time()->set_seconds(7200);
  s.mutable_max_wait_time()->set_seconds(1800);
  EXPECT_TRUE(ValidateScheduling(s).ok());
}

}  // namespace
}  // namespace cairn::aiplatform
