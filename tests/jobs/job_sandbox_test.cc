// Jobs run sandboxed, through a real cairnd and real child processes: the
// job user (root never runs jobs unless --allow-root-jobs), a clean
// environment, its own session, no new privileges, refused template
// variables and job dirs, logs and metric files never read through a link,
// and the server-wide --max-running-jobs cap.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/client_token.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class JobSandboxTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--gpus", "0", "--grace-seconds", "1"});
    server_ =
        std::make_unique<testing::CairndProcess>(dir_.path() + "/data", args);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    stub_ = server_->NewStub();
  }

  // CreateStudy of a one-parameter study whose job runs the shell `script`
  // (its job dir is $CAIRN_JOB_DIR), with `extra` (text format) merged in.
  grpc::Status Create(const std::string& script, const std::string& extra,
                      Study* out) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name(absl::StrCat("s", ++studies_));
    auto* spec = req.mutable_study()->mutable_spec();
    *spec = testing::ShellJobSpec(script, "job");  // "job": $0 of the script.
    spec->set_max_trials(1);
    cairn::v1::StudySpec more;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(extra, &more));
    spec->MergeFrom(more);
    grpc::ClientContext ctx;
    return stub_->CreateStudy(&ctx, req, out);
  }

  Study CreateOk(const std::string& script, const std::string& extra = "") {
    Study out;
    grpc::Status st = Create(script, extra, &out);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return out;
  }

  // The trials of `study` once it is done and their jobs have ended.
  std::vector<Trial> WaitTrials(const std::string& study, int seconds = 30) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::vector<Trial> trials;
    while (std::chrono::steady_clock::now() < deadline) {
      cairn::v1::ListTrialsRequest req;
      req.set_parent(study);
      req.set_include_measurements(true);
      cairn::v1::ListTrialsResponse resp;
      grpc::ClientContext ctx;
      grpc::Status st = stub_->ListTrials(&ctx, req, &resp);
      if (!st.ok()) {
        ADD_FAILURE() << study << ": " << st.error_message();
        return {};
      }
      trials.assign(resp.trials().begin(), resp.trials().end());
      bool done = !trials.empty();
      for (const Trial& t : trials) {
        done = done && t.state() != Trial::ACTIVE &&
               t.job().state() != TrialJob::RUNNING &&
               t.job().state() != TrialJob::QUEUED &&
               t.job().state() != TrialJob::STOPPING;
      }
      if (done) return trials;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << study << " not done after " << seconds << " s";
    return trials;
  }

  // Runs `script` as the only trial's job; returns the file `file` it wrote
  // in its job dir.
  std::string RunAndRead(const std::string& script, const std::string& file) {
    Study study = CreateOk(script);
    std::vector<Trial> trials = WaitTrials(study.name());
    if (trials.size() != 1) return "";
    EXPECT_EQ(trials[0].job().last_exit_code(), 0)
        << ReadFile(trials[0].job().log_path());
    return ReadFile(trials[0].job().job_dir() + "/" + file);
  }

  void ExpectInvalid(const std::string& extra, const std::string& field,
                     const std::string& value) {
    Study out;
    grpc::Status st = Create("true", extra, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << extra;
    EXPECT_NE(st.error_message().find(field), std::string::npos)
        << st.error_message();
    EXPECT_NE(st.error_message().find(value), std::string::npos)
        << st.error_message();
    EXPECT_LT(st.error_message().size(), 1024u);
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::CairndProcess> server_;
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
  int studies_ = 0;
};

TEST_F(JobSandboxTest, RootCairndRunsJobsAsTheJobUserUnlessAllowed) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root: a cairnd that is not root runs jobs as "
                    "itself and cannot switch users";
  }
  const struct passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr) << "no user 'nobody' on this machine";
  StartServer();
  const std::string uid = RunAndRead("id -u > \"$CAIRN_JOB_DIR/uid\"", "uid");
  EXPECT_EQ(uid, absl::StrCat(nobody->pw_uid, "\n"));
  EXPECT_NE(server_->Log().find("jobs run as user nobody"), std::string::npos)
      << server_->Log(2000);
  // The job dir belongs to the job user.
  struct stat st;
  ASSERT_EQ(stat((dir_.path() + "/data/jobs/study-1/trial-1").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid);
  // Nor may jobs read the store beside their jobs root.
  ASSERT_EQ(stat((dir_.path() + "/data/store").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);

  server_->Kill9();
  StartServer({"--allow-root-jobs"});
  EXPECT_NE(server_->Log().find("TRIAL JOBS RUN AS ROOT"), std::string::npos)
      << server_->Log(2000);
  EXPECT_EQ(RunAndRead("id -u > \"$CAIRN_JOB_DIR/uid\"", "uid"), "0\n");
}

TEST_F(JobSandboxTest, JobUserThatCannotReachTheJobsRootStopsTheStart) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run jobs as nobody";
  const std::string hidden = dir_.path() + "/hidden";
  std::filesystem::create_directories(hidden + "/jobs");
  chmod(hidden.c_str(), 0700);
  testing::CairndProcess server(dir_.path() + "/data",
                                {"--jobs-root", hidden + "/jobs"});
  std::string error;
  EXPECT_FALSE(server.Start(&error));
  EXPECT_NE(error.find("--jobs-root: the job user 'nobody'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("--job-user"), std::string::npos) << error;
}

TEST_F(JobSandboxTest, JobsGetACleanEnvironmentTheirOwnSessionAndNoNewPrivs) {
  setenv("SANDBOX_TEST_CAIRND_ONLY", "secret-of-cairnd", 1);
  StartServer();
  unsetenv("SANDBOX_TEST_CAIRND_ONLY");
  Study study = CreateOk(
      "env > \"$CAIRN_JOB_DIR/env\"; cat /proc/$$/stat > "
      "\"$CAIRN_JOB_DIR/stat\";"
      " grep NoNewPrivs /proc/$$/status > \"$CAIRN_JOB_DIR/nnp\"",
      R"pb(job_template { env { key: "MY_SETTING" value: "42" } })pb");
  std::vector<Trial> trials = WaitTrials(study.name());
  ASSERT_EQ(trials.size(), 1u);
  const std::string dir = trials[0].job().job_dir();
  const std::string env = ReadFile(dir + "/env");
  EXPECT_EQ(env.find("SANDBOX_TEST_CAIRND_ONLY"), std::string::npos) << env;
  EXPECT_EQ(env.find("CAIRN_BIN_DIR"), std::string::npos) << env;  // ctest's.
  for (const std::string& want :
       {"MY_SETTING=42\n", "PATH=/usr/local/bin:/usr/bin:/bin\n",
        "CAIRN_TRIAL_ID=1\n", "TF_CONFIG=", "CLOUD_ML_HP_METRIC_FILE=",
        "CAIRN_TOKEN=", "HOME=", "LANG=C.UTF-8\n"}) {
    EXPECT_NE(env.find(want), std::string::npos) << want << " in\n" << env;
  }
  // /proc/PID/stat: pid (comm) state ppid pgrp session ...
  std::vector<std::string> f = absl::StrSplit(ReadFile(dir + "/stat"), ' ');
  ASSERT_GE(f.size(), 6u);
  EXPECT_EQ(f[4], f[0]) << "not its own process group";
  EXPECT_EQ(f[5], f[0]) << "not its own session";
  EXPECT_EQ(ReadFile(dir + "/nnp"), "NoNewPrivs:\t1\n");
}

// A job's token is good for its trial while the job runs, and for nothing
// once it has exited: a token the job printed into its log (which viewers
// may read) cannot act for it afterwards.
TEST_F(JobSandboxTest, AJobsTokenEndsWithTheJob) {
  StartServer();
  const std::string token = RunAndRead(
      "printf %s \"$CAIRN_TOKEN\" > \"$CAIRN_JOB_DIR/token\"", "token");
  ASSERT_FALSE(token.empty());
  auto as_job = cairn::v1::StudyService::NewStub(
      auth::NewAuthChannel(server_->address(), token));
  cairn::v1::AddTrialMeasurementRequest req;
  req.set_trial_name("studies/1/trials/1");
  req.mutable_measurement()->add_metrics()->set_metric_id("loss");
  grpc::ClientContext ctx;
  cairn::v1::Trial trial;
  const grpc::Status s = as_job->AddTrialMeasurement(&ctx, req, &trial);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
}

TEST_F(JobSandboxTest, LoaderAndCairnVariablesAreRefused) {
  StartServer();
  ExpectInvalid(
      R"pb(job_template { env { key: "LD_PRELOAD" value: "/tmp/x.so" } })pb",
      "job_template.env", "LD_PRELOAD");
  ExpectInvalid(
      R"pb(job_template { env { key: "LD_LIBRARY_PATH" value: "/tmp" } })pb",
      "job_template.env", "LD_LIBRARY_PATH");
  ExpectInvalid(
      R"pb(job_template { env { key: "CAIRN_TOKEN" value: "stolen" } })pb",
      "job_template.env", "CAIRN_TOKEN");
  ExpectInvalid(R"pb(job_template { env { key: "TF_CONFIG" value: "{}" } })pb",
                "job_template.env", "TF_CONFIG");
  ExpectInvalid(R"pb(job_template { env { key: "RANK" value: "3" } })pb",
                "job_template.env", "RANK");
}

TEST_F(JobSandboxTest, JobDirsMustLieInTheJobsRootOrAnAllowedDir) {
  const std::string allowed = dir_.path() + "/scratch";
  std::filesystem::create_directories(allowed);
  StartServer({"--allowed-job-dirs", allowed});
  ExpectInvalid(R"pb(job_template { job_dir: "/etc/cairn" })pb",
                "job_template.job_dir", "/etc/cairn");
  ExpectInvalid(R"pb(job_template { job_dir: "a/../../../etc" })pb",
                "job_template.job_dir", "a/../../../etc");
  // A link inside the jobs root that leads out counts where it leads.
  std::filesystem::create_directory_symlink("/etc",
                                            dir_.path() + "/data/jobs/out");
  ExpectInvalid(R"pb(job_template { job_dir: "out/x" })pb",
                "job_template.job_dir", "out/x");
  ExpectInvalid(
      absl::StrCat("job_template { job_dir: \"", allowed, "/../elsewhere\" }"),
      "job_template.job_dir", "elsewhere");
  // Inside an allowed dir: accepted, and the job runs there.
  Study study = CreateOk(
      "echo ran > \"$CAIRN_JOB_DIR/ran\"",
      absl::StrCat("job_template { job_dir: \"", allowed, "/study\" }"));
  std::vector<Trial> trials = WaitTrials(study.name());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].job().job_dir(), allowed + "/study/trial-1");
  EXPECT_EQ(ReadFile(allowed + "/study/trial-1/ran"), "ran\n");
}

TEST_F(JobSandboxTest, LinksLeftInTheJobDirAreNeverFollowed) {
  StartServer();
  // Secrets only cairnd's user can read; the job points its log and its
  // metric file at them.
  const std::string secret = dir_.path() + "/secret";
  const std::string secret_metrics = dir_.path() + "/secret.metrics";
  {
    std::ofstream(secret) << "TOPSECRET\n";
    std::ofstream(secret_metrics)
        << R"({"global_step": "1", "loss": "42", "timestamp": 9e9})"
        << "\n";
  }
  chmod(secret.c_str(), 0600);
  chmod(secret_metrics.c_str(), 0600);
  Study study = CreateOk(
      absl::StrCat("cd \"$CAIRN_JOB_DIR\" && rm job.log && ln -s ", secret,
                   " job.log && ln -s ", secret_metrics, " hypertune.metrics"));
  std::vector<Trial> trials = WaitTrials(study.name());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].measurements_size(), 0)
      << "metrics read through a link: " << trials[0].ShortDebugString();
  cairn::v1::ReadTrialLogsRequest req;
  req.set_name(trials[0].name());
  cairn::v1::ReadTrialLogsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status st = stub_->ReadTrialLogs(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("symbolic link"), std::string::npos)
      << st.error_message();
  EXPECT_EQ(resp.data().find("TOPSECRET"), std::string::npos);
  EXPECT_EQ(st.error_message().find("TOPSECRET"), std::string::npos);
  // The secret is untouched (no attempt header appended through the link).
  EXPECT_EQ(ReadFile(secret), "TOPSECRET\n");
}

TEST_F(JobSandboxTest, MaxRunningJobsCapsJobsAcrossStudies) {
  StartServer({"--max-running-jobs", "1"});
  const std::string shared = dir_.path() + "/shared";
  std::filesystem::create_directories(shared);
  std::filesystem::permissions(
      shared, std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  const std::string record = shared + "/record";
  const std::string script =
      absl::StrCat("echo start $(date +%s.%N) >> ", record,
                   "; sleep 0.2; echo end ", "$(date +%s.%N) >> ", record);
  Study a = CreateOk(script, "max_trials: 3 max_parallel_trials: 3");
  Study b = CreateOk(script, "max_trials: 2 max_parallel_trials: 2");
  std::vector<Trial> ta = WaitTrials(a.name());
  std::vector<Trial> tb = WaitTrials(b.name());
  EXPECT_EQ(ta.size() + tb.size(), 5u);
  std::vector<std::pair<double, int>> events;  // (time, +1 start / -1 end)
  std::ifstream in(record);
  std::string kind;
  double time = 0;
  while (in >> kind >> time) events.push_back({time, kind == "start" ? 1 : -1});
  ASSERT_EQ(events.size(), 10u);
  std::sort(events.begin(), events.end());
  int running = 0;
  for (const auto& [t, delta] : events) {
    running += delta;
    EXPECT_LE(running, 1) << "two jobs ran at once at " << t;
  }
}

}  // namespace
}  // namespace cairn
