// Trials run as training jobs by a real cairnd with real child processes:
// GPU slots, hypertune metric collection, restart with resume after SIGKILL,
// timeouts, max_failed_trials, early stopping, and cairnd kill -9 + restart.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/jobs/study_fixture.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

class JobsTest : public testing::StudyFixture {
 protected:
  void StartServer(std::vector<std::string> args = {"--gpus", "2"}) {
    args.push_back("--grace-seconds");
    args.push_back("2");
    server_ =
        std::make_unique<testing::CairndProcess>(dir_.path() + "/data", args);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    stub_ = server_->NewStub();
  }

  // A directory the jobs (the job user) may write to, e.g. a record file.
  std::string JobWritableDir() {
    const std::string dir = dir_.path() + "/shared";
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(
        dir, std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
    return dir;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::CairndProcess> server_;
};

struct Event {
  bool start;
  std::string trial, gpus;
  double time;
};

std::vector<Event> ReadRecord(const std::string& path) {
  std::vector<Event> events;
  std::ifstream in(path);
  std::string kind, trial, gpus, line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() != 4) continue;
    events.push_back({f[0] == "start", f[1], f[2], std::stod(f[3])});
  }
  return events;
}

TEST_F(JobsTest, GpuSlotsAreNeverSharedAndEveryTrialSucceeds) {
  StartServer({"--gpus", "2"});
  const std::string record = JobWritableDir() + "/record.txt";
  Study study = Create("gpus",
                       R"pb(max_trials: 12
                            max_parallel_trials: 3
                            job_template { gpus_per_trial: 1 })pb",
                       {{"TOY_RECORD", record}, {"TOY_SLEEP", "0.03"}});
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  std::vector<Trial> trials = Trials(study.name(), true);
  ASSERT_EQ(trials.size(), 12u);
  for (const Trial& t : trials) {
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    EXPECT_EQ(t.job().state(), TrialJob::SUCCEEDED);
    EXPECT_EQ(t.final_measurement().step_count(), 10);
    EXPECT_EQ(t.measurements_size(), 10) << "hypertune route lost reports";
    EXPECT_EQ(t.job().gpus_size(), 1);
  }
  // Replay the start/end events: at most 2 jobs at once, disjoint GPUs.
  std::vector<Event> events = ReadRecord(record);
  ASSERT_EQ(events.size(), 24u);
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.time < b.time; });
  std::map<std::string, std::string> running;  // trial -> gpu
  for (const Event& e : events) {
    if (!e.start) {
      running.erase(e.trial);
      continue;
    }
    EXPECT_TRUE(e.gpus == "0" || e.gpus == "1") << e.gpus;
    for (const auto& [trial, gpu] : running) {
      EXPECT_NE(gpu, e.gpus)
          << "trials " << trial << " and " << e.trial << " share GPU " << gpu;
    }
    running[e.trial] = e.gpus;
    EXPECT_LE(running.size(), 2u);
  }
}

TEST_F(JobsTest, KilledJobIsRestartedAndResumesFromItsCheckpoint) {
  StartServer();
  Study study = Create("resume",
                       R"pb(max_trials: 1
                            job_template { max_restarts: 2 })pb",
                       {{"TOY_SLEEP", "0.2"}, {"TOY_STEPS", "12"}});
  // Wait for a few steps to land, then kill the job with SIGKILL.
  const std::string trial_name = study.name() + "/trials/1";
  Trial t;
  for (int i = 0; i < 200; ++i) {
    cairn::v1::GetTrialRequest req;
    req.set_name(trial_name);
    grpc::ClientContext ctx;
    if (!stub_->GetTrial(&ctx, req, &t).ok()) t.Clear();
    if (t.measurements_size() >= 3 && t.job().pid() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(t.measurements_size(), 3);
  ASSERT_GT(t.job().pid(), 0);
  const int64_t pid = t.job().pid();
  ASSERT_EQ(kill(static_cast<pid_t>(pid), SIGKILL), 0);
  Study done = WaitDone(study.name(), 60);
  EXPECT_EQ(done.state(), Study::COMPLETED);
  t = GetTrial(trial_name);
  EXPECT_EQ(t.state(), Trial::SUCCEEDED);
  EXPECT_EQ(t.job().restarts(), 1);
  EXPECT_EQ(t.job().attempts(), 2);
  EXPECT_EQ(t.job().last_exit_code(), 0);
  EXPECT_EQ(t.final_measurement().step_count(), 12);
  // The restart resumed from the checkpoint, with CAIRN_RESUME=1.
  std::ifstream in(t.job().job_dir() + "/resume.log");
  std::string word, resume_flag;
  int resumed_from = 0;
  ASSERT_TRUE(in >> word >> resumed_from >> resume_flag);
  EXPECT_EQ(word, "resume");
  EXPECT_GE(resumed_from, 3);
  EXPECT_LT(resumed_from, 12);
  EXPECT_EQ(resume_flag, "1");
  // Steps 1..12 all present, none twice.
  std::set<int64_t> steps;
  for (const auto& m : t.measurements()) {
    EXPECT_TRUE(steps.insert(m.step_count()).second) << m.step_count();
  }
  EXPECT_EQ(steps.size(), 12u);
  // The job's log holds both attempts.
  std::ifstream log(t.job().log_path());
  std::stringstream ss;
  ss << log.rdbuf();
  EXPECT_NE(ss.str().find("attempt 2 (resume)"), std::string::npos) << ss.str();
  // cairnd logged each job event, one line each.
  const std::string cairnd_log = server_->Log();
  for (const std::string& line :
       {absl::StrCat("job ", trial_name, ": queued"),
        absl::StrCat("job ", trial_name, ": started attempt 1 (pid "),
        absl::StrCat("job ", trial_name, ": pid ", pid,
                     " exited: killed by signal 9"),
        absl::StrCat("job ", trial_name, ": restarting in 1s (restart 1 of 2"),
        absl::StrCat("job ", trial_name, ": started attempt 2, resuming"),
        absl::StrCat(" exited: exit code 0")}) {
    EXPECT_NE(cairnd_log.find(line), std::string::npos) << line;
  }
}

TEST_F(JobsTest, TimeoutKillsTheJobAndFailsTheTrial) {
  StartServer();
  Study study =
      Create("timeout",
             R"pb(max_trials: 1
                  job_template { max_running_time { seconds: 1 } })pb",
             {{"TOY_HANG", "1"}});
  Study done = WaitDone(study.name(), 30);
  EXPECT_EQ(done.state(), Study::COMPLETED);
  Trial t = GetTrial(study.name() + "/trials/1");
  EXPECT_EQ(t.state(), Trial::FAILED);
  EXPECT_EQ(t.job().state(), TrialJob::FAILED);
  EXPECT_NE(t.infeasible_reason().find("timeout"), std::string::npos)
      << t.infeasible_reason();
}

TEST_F(JobsTest, MaxFailedTrialsEndsTheStudyAsFailed) {
  StartServer();
  Study study = Create("failing",
                       R"pb(max_trials: 10
                            max_parallel_trials: 1
                            max_failed_trials: 2
                            job_template { max_restarts: 1 })pb",
                       {{"TOY_FAIL", "1"}});
  Study done = WaitDone(study.name(), 60);
  EXPECT_EQ(done.state(), Study::FAILED);
  EXPECT_NE(done.inactive_reason().find("max_failed_trials"),
            std::string::npos);
  EXPECT_NE(server_->Log().find(absl::StrCat("study ", study.name(),
                                             " (failing) FAILED: "
                                             "max_failed_trials (2) reached")),
            std::string::npos)
      << server_->Log(2000);
  std::vector<Trial> trials = Trials(study.name(), false);
  ASSERT_EQ(trials.size(), 2u);
  for (const Trial& t : trials) {
    EXPECT_EQ(t.state(), Trial::FAILED);
    EXPECT_EQ(t.job().restarts(), 1);
    EXPECT_EQ(t.job().last_exit_code(), 3);
  }
}

TEST_F(JobsTest, MedianRuleStopsTheBadTrials) {
  StartServer();
  // loss = x + 1/step, so the curves never cross: trials with a larger x
  // are worse at every step than the running averages of better ones.
  Study study = Create("early",
                       R"pb(max_trials: 10
                            max_parallel_trials: 1
                            algorithm: GRID_SEARCH
                            early_stopping {
                              median { min_steps: 3 min_completed_trials: 3 }
                            })pb",
                       {{"TOY_SLEEP", "0.05"}, {"TOY_STEPS", "15"}});
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  std::vector<Trial> trials = Trials(study.name(), true);
  int stopped = 0;
  for (const Trial& t : trials) {
    SCOPED_TRACE(t.ShortDebugString());
    ASSERT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    if (!t.stopped_early()) {
      EXPECT_EQ(t.final_measurement().step_count(), 15);
      continue;
    }
    ++stopped;
    EXPECT_LT(t.final_measurement().step_count(), 15) << t.ShortDebugString();
    EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
    EXPECT_NE(t.metadata().at("early_stopping_reason").find("median"),
              std::string::npos);
  }
  EXPECT_GE(stopped, 1);
  if (stopped == 0) {
    for (const Trial& t : trials) {
      ADD_FAILURE() << t.parameters(0).ShortDebugString() << " "
                    << t.final_measurement().ShortDebugString();
    }
  }
  // The best trial (x = 0) always runs to the end.
  for (const Trial& t : trials) {
    if (t.parameters(0).value().number_value() == 0) {
      EXPECT_FALSE(t.stopped_early());
    }
  }
}

TEST_F(JobsTest, CairndKill9MidStudyFinishesWithExactlyMaxTrials) {
  StartServer();
  Study study = Create("crash", R"pb(max_trials: 6 max_parallel_trials: 2)pb",
                       {{"TOY_SLEEP", "0.1"}, {"TOY_STEPS", "10"}});
  // Let some trials finish and others be mid-run, then kill -9 cairnd.
  // Wait until two trials are done and another is mid-run (its job RUNNING
  // with measurements), so the kill interrupts a job that must resume.
  for (int i = 0; i < 300; ++i) {
    int succeeded = 0;
    bool mid_run = false;
    for (const Trial& t : Trials(study.name(), true)) {
      succeeded += t.state() == Trial::SUCCEEDED ? 1 : 0;
      mid_run = mid_run || (t.state() == Trial::ACTIVE &&
                            t.job().state() == TrialJob::RUNNING &&
                            t.measurements_size() >= 2);
    }
    if (succeeded >= 2 && mid_run) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server_->Kill9();
  StartServer();
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  std::vector<Trial> trials = Trials(study.name(), true);
  ASSERT_EQ(trials.size(), 6u);
  int resumed = 0;
  for (const Trial& t : trials) {
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    std::set<int64_t> steps;
    for (const auto& m : t.measurements()) steps.insert(m.step_count());
    EXPECT_EQ(steps.size(), 10u) << "trial " << t.id() << " lost measurements";
    resumed += t.job().attempts() > 1 ? 1 : 0;
  }
  EXPECT_GE(resumed, 1);
}

// A study whose command is `program` (an executable in tests/jobs).
Study CreateWithProgram(cairn::v1::StudyService::Stub* stub,
                        const std::string& name, const std::string& program,
                        const std::map<std::string, std::string>& env) {
  cairn::v1::CreateStudyRequest req;
  req.mutable_study()->set_display_name(name);
  auto* spec = req.mutable_study()->mutable_spec();
  google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters { parameter_id: "x" type: INTEGER min_value: 1 max_value: 9 }
        metrics { metric_id: "loss" goal: MINIMIZE }
        algorithm: RANDOM_SEARCH
        max_trials: 2
        max_parallel_trials: 2
      )pb",
      spec);
  const char* src = std::getenv("CAIRN_SOURCE_DIR");
  spec->mutable_job_template()->add_command(std::string(src ? src : ".") +
                                            "/tests/jobs/" + program);
  for (const auto& [k, v] : env) {
    (*spec->mutable_job_template()->mutable_env())[k] = v;
  }
  Study out;
  grpc::ClientContext ctx;
  grpc::Status st = stub->CreateStudy(&ctx, req, &out);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return out;
}

TEST_F(JobsTest, JobsReportOverGrpcAndCompleteTheirOwnTrials) {
  StartServer();
  const char* src = std::getenv("CAIRN_SOURCE_DIR");
  Study study = CreateWithProgram(
      stub_.get(), "grpc-route", "grpc_reporter.py",
      {{"TOY_PROTO_DIR", std::string(src ? src : ".") + "/proto"}});
  Study done = WaitDone(study.name(), 90);
  EXPECT_EQ(done.state(), Study::COMPLETED);
  // The trials completed before their processes exited: wait for the jobs.
  for (int i = 0; i < 100; ++i) {
    bool settled = true;
    for (const Trial& t : Trials(study.name(), false)) {
      settled = settled && t.job().state() == TrialJob::SUCCEEDED;
    }
    if (settled) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const Trial& t : Trials(study.name(), true)) {
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    EXPECT_EQ(t.job().state(), TrialJob::SUCCEEDED);
    EXPECT_EQ(t.measurements_size(), 5);
    // The program's own final measurement, not the last reported one.
    EXPECT_EQ(t.final_measurement().step_count(), 99);
    EXPECT_DOUBLE_EQ(t.final_measurement().metrics(0).value(),
                     t.parameters(0).value().number_value());
  }
}

TEST_F(JobsTest, ShellScriptJobsReportThroughTheCli) {
  StartServer();
  Study study = CreateWithProgram(stub_.get(), "cli-route", "cli_reporter.sh",
                                  {{"TOY_BIN_DIR", testing::BinDir()}});
  Study done = WaitDone(study.name(), 60);
  EXPECT_EQ(done.state(), Study::COMPLETED);
  for (const Trial& t : Trials(study.name(), true)) {
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    EXPECT_EQ(t.measurements_size(), 4);
    // The last reported measurement became final.
    EXPECT_EQ(t.final_measurement().step_count(), 4);
  }
}

TEST_F(JobsTest, CliWaitsFollowsLogsAndStopsStudies) {
  StartServer();
  const std::string cairn = testing::BinDir() + "/cairn";
  Study study = Create("cli", R"pb(max_trials: 3 max_parallel_trials: 3)pb",
                       {{"TOY_SLEEP", "0.05"}});
  testing::CommandResult wait =
      testing::RunCommand({cairn, "--server", server_->address(), "study",
                           "wait", "cli", "--interval", "0.2"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_NE(wait.out.find("3/3 trials done, 0 running, best loss"),
            std::string::npos)
      << wait.out;
  EXPECT_NE(wait.out.find("is COMPLETED: max_trials (3) reached"),
            std::string::npos)
      << wait.out;
  testing::CommandResult logs =
      testing::RunCommand({cairn, "--server", server_->address(), "trial",
                           "logs", "cli", "2", "--follow"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("=== cairn: attempt 1 of trial " + study.name() +
                          "/trials/2"),
            std::string::npos)
      << logs.out;
  EXPECT_NE(logs.out.find("done"), std::string::npos) << logs.out;
  // Stopping a COMPLETED study changes nothing.
  testing::CommandResult stop_done = testing::RunCommand(
      {cairn, "--server", server_->address(), "study", "stop", "cli"});
  EXPECT_EQ(stop_done.exit_code, 0) << stop_done.err;
  EXPECT_NE(stop_done.out.find("is already COMPLETED; nothing to stop"),
            std::string::npos)
      << stop_done.out;
  EXPECT_EQ(GetStudy(study.name()).state(), Study::COMPLETED);

  // A study of long jobs: stop cancels them.
  Study slow = Create("slow", R"pb(max_trials: 4 max_parallel_trials: 2)pb",
                      {{"TOY_SLEEP", "5"}});
  for (int i = 0; i < 100 && GetStudy(slow.name()).pending_count() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<pid_t> pids;
  for (const Trial& t : Trials(slow.name(), false)) {
    pids.push_back(static_cast<pid_t>(t.job().pid()));
  }
  ASSERT_EQ(pids.size(), 2u);
  testing::CommandResult stop = testing::RunCommand(
      {cairn, "--server", server_->address(), "study", "stop", "slow"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  Study stopped = WaitDone(slow.name(), 5);
  EXPECT_EQ(stopped.state(), Study::INACTIVE);
  std::vector<Trial> trials;
  for (int i = 0; i < 100; ++i) {
    trials = Trials(slow.name(), false);
    bool settled = true;
    for (const Trial& t : trials) {
      settled = settled && t.job().state() == TrialJob::CANCELLED;
    }
    if (settled) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(trials.size(), 2u);
  for (const Trial& t : trials) {
    EXPECT_EQ(t.job().state(), TrialJob::CANCELLED) << t.ShortDebugString();
    // Stopped, not FAILED: stopped early with a result, else CANCELLED.
    EXPECT_TRUE(t.state() == Trial::CANCELLED ||
                (t.state() == Trial::SUCCEEDED && t.stopped_early()))
        << t.ShortDebugString();
    EXPECT_EQ(t.job().pid(), 0);
  }
  for (pid_t pid : pids) {
    EXPECT_GT(pid, 0);
    EXPECT_NE(kill(pid, 0), 0) << "job " << pid << " still runs";
  }
  // Unknown trials and studies give one clear line and a non-zero exit.
  testing::CommandResult bad = testing::RunCommand(
      {cairn, "--server", server_->address(), "trial", "logs", "cli", "99"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("NOT_FOUND"), std::string::npos) << bad.err;
}

TEST_F(JobsTest, BadTemplatesAreRejected) {
  StartServer({"--gpus", "1"});
  cairn::v1::CreateStudyRequest req;
  req.mutable_study()->set_display_name("bad");
  google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters { parameter_id: "x" type: DOUBLE min_value: 0 max_value: 1 }
        metrics { metric_id: "loss" goal: MINIMIZE }
        job_template { command: "/bin/true" job_dir: "../../etc" }
      )pb",
      req.mutable_study()->mutable_spec());
  Study out;
  {
    grpc::ClientContext ctx;
    grpc::Status st = stub_->CreateStudy(&ctx, req, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(st.error_message().find("job_template.job_dir"),
              std::string::npos)
        << st.error_message();
  }
  auto* tmpl = req.mutable_study()->mutable_spec()->mutable_job_template();
  tmpl->clear_job_dir();
  tmpl->set_gpus_per_trial(4);
  {
    grpc::ClientContext ctx;
    grpc::Status st = stub_->CreateStudy(&ctx, req, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(st.error_message().find("gpus_per_trial"), std::string::npos);
  }
}

}  // namespace
}  // namespace cairn
