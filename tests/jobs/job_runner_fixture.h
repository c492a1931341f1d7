// The job runner in-process, shared by its unit tests (job_runner_unit_test,
// job_runner_stop_test): a real StudyManager over a RocksDB store in a temp
// dir, a fake executor that records what the runner asks and lets each test
// decide when and how jobs exit, and a fake clock advanced by hand. The
// tests drive the runner pass by pass with RunOnce(); nothing sleeps.
#ifndef CAIRN_TESTS_JOBS_JOB_RUNNER_FIXTURE_H_
#define CAIRN_TESTS_JOBS_JOB_RUNNER_FIXTURE_H_

#include <map>
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
#include "store/store.h"
#include "tests/testing/manual_clock.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace cairn::jobs {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

// Records starts, terminations and orphan kills; a job runs until the test
// calls Exit() for it. Thread-safe.
class FakeExecutor : public Executor {
 public:
  struct Started {
    JobSpec spec;
    JobHandle handle;
  };

  absl::StatusOr<JobHandle> Start(const JobSpec& spec) override {
    absl::MutexLock lock(&mu_);
    if (fail_starts_) {
      return absl::FailedPreconditionError("command: cannot execute 'fake'");
    }
    JobHandle handle;
    handle.pid = handle.id = next_pid_++;
    handle.start_ticks = 5000 + handle.pid;
    starts_.push_back({spec, handle});
    return handle;
  }

  std::optional<JobExit> Poll(const JobHandle& job) override {
    absl::MutexLock lock(&mu_);
    auto it = exits_.find(job.pid);
    if (it == exits_.end()) return std::nullopt;
    JobExit exit = it->second;
    exits_.erase(it);
    return exit;
  }

  void Terminate(const JobHandle& job, absl::Duration grace) override {
    absl::MutexLock lock(&mu_);
    terminates_.emplace_back(job.pid, grace);
  }

  bool KillOrphan(int64_t pid, int64_t start_ticks) override {
    absl::MutexLock lock(&mu_);
    orphans_.emplace_back(pid, start_ticks);
    return true;
  }

  bool Queued(const JobHandle& job) override {
    absl::MutexLock lock(&mu_);
    return queued_.count(job.pid) > 0;
  }
  // The job started as `pid` waits in the cluster's queue (or runs).
  void SetQueued(int64_t pid, bool queued) {
    absl::MutexLock lock(&mu_);
    if (queued) {
      queued_.insert(pid);
    } else {
      queued_.erase(pid);
    }
  }

  // The job started as `pid` exits as `exit` (seen by the next Poll).
  void Exit(int64_t pid, int exit_code, int signal = 0) {
    absl::MutexLock lock(&mu_);
    exits_[pid] = JobExit{exit_code, signal, ""};
  }
  void FailStarts(bool fail) {
    absl::MutexLock lock(&mu_);
    fail_starts_ = fail;
  }
  std::vector<Started> starts() {
    absl::MutexLock lock(&mu_);
    return starts_;
  }
  Started last_start() {
    absl::MutexLock lock(&mu_);
    return starts_.back();
  }
  std::vector<std::pair<int64_t, absl::Duration>> terminates() {
    absl::MutexLock lock(&mu_);
    return terminates_;
  }
  std::vector<std::pair<int64_t, int64_t>> orphans() {
    absl::MutexLock lock(&mu_);
    return orphans_;
  }
  // Blocks until `n` jobs were started (false after 60 s).
  bool AwaitStarts(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return starts_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60));
  }

 private:
  absl::Mutex mu_;
  int64_t next_pid_ ABSL_GUARDED_BY(mu_) = 100;
  bool fail_starts_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Started> starts_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, JobExit> exits_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<int64_t, absl::Duration>> terminates_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<int64_t, int64_t>> orphans_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> queued_ ABSL_GUARDED_BY(mu_);
};

class RestartCounter : public StudyObserver {
 public:
  void OnJobRestart(const ObservedStudy& study) override {
    absl::MutexLock lock(&mu_);
    studies_.push_back(std::string(study.name));
  }
  std::vector<std::string> studies() {
    absl::MutexLock lock(&mu_);
    return studies_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> studies_ ABSL_GUARDED_BY(mu_);
};

inline std::string Env(const JobSpec& spec, const std::string& key) {
  auto it = spec.env.find(key);
  return it == spec.env.end() ? "<unset>" : it->second;
}

class JobRunnerUnitTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenManager(); }

  // Opens (or reopens, as a restarted cairnd would) the store and manager.
  void OpenManager() {
    runner_.reset();
    manager_.reset();
    store_.reset();
    StudyManagerOptions options;
    options.clock = &clock_;
    ASSERT_NO_FATAL_FAILURE(testing::OpenStoreAndManager(
        dir_.path() + "/store", StoreOptions(), options, &store_, &manager_));
  }

  JobRunnerOptions Options(int gpus = 0) {
    JobRunnerOptions options;
    options.jobs_root = dir_.path() + "/jobs";
    options.server_address = "127.0.0.1:9";
    options.gpus = gpus;
    options.grace_period = absl::Seconds(7);
    options.observer = &restarts_;
    return options;
  }

  void NewRunner(const JobRunnerOptions& options,
                 FakeExecutor* executor = nullptr) {
    runner_ = std::make_unique<JobRunner>(
        manager_.get(), executor != nullptr ? executor : &executor_, &clock_,
        options);
    runner_->Recover();
  }

  // A new runner with `options` after its first pass: the jobs it started.
  std::vector<FakeExecutor::Started> FirstPass(
      const JobRunnerOptions& options) {
    NewRunner(options);
    runner_->RunOnce();
    return executor_.starts();
  }

  // Advances the clock by `d`, runs a pass: how many jobs were started.
  size_t StartsAfter(absl::Duration d) {
    clock_.Advance(d);
    runner_->RunOnce();
    return executor_.starts().size();
  }

  // A Branin study (x1, x2) whose template runs /bin/train --fast;
  // `extra` (StudySpec text) is merged in.
  std::string CreateStudy(const std::string& extra) {
    Study study;
    study.set_display_name(absl::StrCat("study", ++studies_));
    auto* spec = study.mutable_spec();
    *spec = testing::BraninSpec();
    spec->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
    spec->mutable_job_template()->add_command("/bin/train");
    spec->mutable_job_template()->add_command("--fast");
    cairn::v1::StudySpec more;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(extra, &more));
    spec->MergeFrom(more);
    auto created = manager_->CreateStudy(study);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->name() : "";
  }

  Trial Get(const std::string& trial_name) {
    auto t = manager_->GetTrialBasic(trial_name);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : Trial();
  }

  void Report(const std::string& trial_name, double loss, int64_t step) {
    ASSERT_TRUE(
        manager_->AddMeasurement(trial_name, testing::Loss(loss, step)).ok());
  }

  testing::TempDir dir_;
  testing::ManualClock clock_;
  FakeExecutor executor_;
  RestartCounter restarts_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
  std::unique_ptr<JobRunner> runner_;
  int studies_ = 0;
};

}  // namespace cairn::jobs

#endif  // CAIRN_TESTS_JOBS_JOB_RUNNER_FIXTURE_H_
