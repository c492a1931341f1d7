// Trials as Slurm batch jobs through a real cairnd --executor=slurm, against
// a real two-node cluster on this host (scripts/slurm-local.sh, started in a
// temp dir and stopped at the end): trials succeed, cairnd kill -9 + restart
// reattaches with exactly one submission per trial, a requeued job resumes,
// a node set down mid-run, study stop leaves nothing in squeue, and a
// multi-replica trial (examples/pytorch_gloo: master + 2 workers) runs as
// one job spread over both nodes and restarts as a group when a worker is
// killed -9, and a master's exit ends the group (its parameter server,
// which would run forever, is stopped) with TF_CONFIG on the ports the
// tasks took at run time.
// Skipped (with the reason) when the Slurm binaries are missing.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/jobs/slurm_fixture.h"
#include "tests/monitoring/test_util.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;
using testing::Sh;

// What follows `prefix` up to the next space, ")" or line end, for every
// occurrence in `text`.
std::vector<std::string> Fields(const std::string& text,
                                const std::string& prefix) {
  std::vector<std::string> out;
  for (size_t at = text.find(prefix); at != std::string::npos;
       at = text.find(prefix, at + 1)) {
    const size_t from = at + prefix.size();
    out.push_back(text.substr(from, text.find_first_of(" )\n", from) - from));
  }
  return out;
}

struct SlurmJob {
  std::string state, node;
  int restarts = 0;
};

// Every job of the cluster with an id above `after` (squeue -t all keeps
// finished ones MinJobAge): each test's cairnd numbers its studies from 1.
std::multimap<std::string, SlurmJob> JobsByName(int64_t after) {
  std::multimap<std::string, SlurmJob> jobs;
  for (absl::string_view line :
       absl::StrSplit(Sh("squeue -h -t all -O "
                         "'Name:|,State:|,NodeList:|,RestartCnt:|,JobID:|' "
                         "2>/dev/null"),
                      '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, '|');
    int64_t id = 0;
    if (f.size() < 5 ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(f[4]), &id) ||
        id <= after) {
      continue;
    }
    SlurmJob j;
    j.state = std::string(absl::StripAsciiWhitespace(f[1]));
    j.node = std::string(absl::StripAsciiWhitespace(f[2]));
    (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(f[3]), &j.restarts);
    jobs.emplace(std::string(absl::StripAsciiWhitespace(f[0])), j);
  }
  return jobs;
}

std::string JobName(const Trial& t) {
  std::string name = absl::StrCat("cairn-", t.name());
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

class SlurmTest : public testing::SlurmFixture {
 protected:
  Study Create(const std::string& name, int max_trials, int parallel,
               const std::map<std::string, std::string>& env) {
    return StudyFixture::Create(
        name,
        absl::StrCat("max_trials: ", max_trials, " max_parallel_trials: ",
                     parallel, " job_template { max_restarts: 1 }"),
        env);
  }

  // A trial whose job runs and has reported `steps`, or nullopt after
  // `seconds`.
  std::optional<Trial> WaitRunning(const std::string& study, int steps,
                                   int seconds = 30) {
    for (int i = 0; i < seconds * 20; ++i) {
      for (const Trial& t : Trials(study)) {
        if (t.state() == Trial::ACTIVE &&
            t.job().state() == TrialJob::RUNNING &&
            t.measurements_size() >= steps) {
          return t;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  // Every trial SUCCEEDED with all its steps, submitted exactly once.
  void ExpectAllSucceededOnce(const std::string& study, size_t count,
                              int steps) {
    std::vector<Trial> trials = Trials(study);
    ASSERT_EQ(trials.size(), count);
    const auto jobs = JobsByName(first_job_);
    for (const Trial& t : trials) {
      EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
      EXPECT_EQ(t.measurements_size(), steps) << t.name();
      EXPECT_EQ(jobs.count(JobName(t)), 1u) << JobName(t);
    }
  }

  // cairn_cluster_jobs{state=STATE} on cairnd's /metrics, waiting up to 10 s
  // for it to reach at least `at_least`.
  double ClusterJobs(const std::string& state, double at_least) {
    double value = 0;
    for (int i = 0; i < 100 && value < at_least; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto r = monitoring::testing::HttpGet(metrics_port_, "/metrics");
      if (!r.ok()) continue;
      value = monitoring::testing::Sample(r->body, "cairn_cluster_jobs",
                                          {{"state", state}})
                  .value_or(0);
    }
    return value;
  }
};

TEST_F(SlurmTest, TrialsRunAsSlurmJobsAndSurviveACairndKill9) {
  StartServer();
  Study study =
      Create("kill9", 4, 2, {{"TOY_STEPS", "8"}, {"TOY_SLEEP", "0.25"}});
  ASSERT_TRUE(WaitRunning(study.name(), 2).has_value());
  server_->Kill9();
  StartServer();
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  ExpectAllSucceededOnce(study.name(), 4, 8);
  for (const Trial& t : Trials(study.name())) {
    EXPECT_EQ(t.job().attempts(), 1) << "submitted again: " << t.name();
  }
}

TEST_F(SlurmTest, RequeuedJobResumesAndNodeDownMovesTheJob) {
  StartServer();
  Study study =
      Create("requeue", 2, 2, {{"TOY_STEPS", "10"}, {"TOY_SLEEP", "0.3"}});
  std::optional<Trial> t = WaitRunning(study.name(), 2);
  ASSERT_TRUE(t.has_value());
  // Requeue one job; set the node of the other down.
  const std::string id = absl::StrCat(t->job().pid());
  Sh("scontrol requeue " + id);
  Sh("scontrol update jobid=" + id + " StartTime=now");
  // The other trial's job may not have a node yet on a loaded machine (it
  // was under ASan): wait for it.
  std::string down_node, moved;
  for (int i = 0; i < 300 && down_node.empty(); ++i) {
    for (const Trial& other : Trials(study.name())) {
      if (other.name() == t->name() || other.job().pid() <= 0) continue;
      down_node = std::string(absl::StripAsciiWhitespace(Sh(
          absl::StrCat("squeue -h -t running -o %N -j ", other.job().pid()))));
      if (down_node.empty()) continue;
      moved = JobName(other);
      Sh("scontrol update nodename=" + down_node + " state=down reason=test");
      Sh(absl::StrCat("sleep 0.5; scontrol update jobid=", other.job().pid(),
                      " StartTime=now"));
    }
    if (down_node.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  Study done = WaitDone(study.name(), 120);
  if (!down_node.empty()) {
    Sh("scontrol update nodename=" + down_node + " state=resume");
  }
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  ExpectAllSucceededOnce(study.name(), 2, 10);
  const auto jobs = JobsByName(first_job_);
  auto it = jobs.find(JobName(*t));
  ASSERT_NE(it, jobs.end());
  EXPECT_GE(it->second.restarts, 1) << "the requeued job did not restart";
  for (const Trial& trial : Trials(study.name())) {
    EXPECT_GE(trial.job().restarts(), 1)
        << "requeue not counted: " << trial.name();
  }
  ASSERT_FALSE(moved.empty()) << "no second job to set its node down";
  it = jobs.find(moved);
  ASSERT_NE(it, jobs.end());
  EXPECT_GE(it->second.restarts, 1) << "node down did not requeue " << moved;
  EXPECT_NE(it->second.node, down_node) << "did not move off " << down_node;
}

TEST_F(SlurmTest, StudyStopLeavesNothingInSqueue) {
  StartServer();
  Study study =
      Create("stop", 4, 2, {{"TOY_STEPS", "200"}, {"TOY_SLEEP", "0.2"}});
  ASSERT_TRUE(WaitRunning(study.name(), 1).has_value());
  // Prometheus counts the Slurm jobs by Slurm's state.
  EXPECT_GE(ClusterJobs("RUNNING", 1), 1);
  ASSERT_NO_FATAL_FAILURE(StopStudy(study.name()));
  std::string left;
  for (int i = 0; i < 150; ++i) {
    left = Sh("squeue -h -o '%j %T' 2>/dev/null | grep '^cairn-" +
              std::string(study.name()).replace(7, 1, "-") + "-' || true");
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(left, "") << "jobs left in squeue after study stop";
}

TEST_F(SlurmTest, GlooReplicasSpanBothNodesAndRestartAsAGroup) {
  if (!testing::HaveTorch()) {
    GTEST_SKIP() << "python3-torch is not installed: the PyTorch gloo "
                    "example cannot run";
  }
  StartServer();
  testing::CommandResult created =
      testing::CreateGlooStudy(server_->address(), dir_.path());
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string study = "studies/1";

  // Once the master has checkpointed twice (step 10), kill -9 worker 1's
  // process (the launcher logged its pid).
  std::optional<Trial> t = WaitRunning(study, 2, 120);
  ASSERT_TRUE(t.has_value()) << server_->Log(4000);
  const std::string dir = t->job().job_dir();
  const std::vector<std::string> pids =
      Fields(testing::ReadFile(dir + "/worker-replica-1.log"),
             "cairn: worker-replica-1 started (pid ");
  int pid = 0;
  ASSERT_FALSE(pids.empty());
  ASSERT_TRUE(absl::SimpleAtoi(pids[0], &pid)) << pids[0];
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  // While the group's second attempt runs, cairnd is killed -9 and
  // restarted: the attempt's group file must still go with its job.
  for (int i = 0; i < 600; ++i) {
    const std::vector<Trial> now = Trials(study);
    if (!now.empty() && now[0].job().attempts() >= 2 &&
        now[0].state() == Trial::ACTIVE) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server_->Kill9();
  StartServer();

  Study done = WaitDone(study, 180);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  std::vector<Trial> trials = Trials(study);
  ASSERT_EQ(trials.size(), 1u);
  const Trial& trial = trials[0];
  testing::ExpectGlooSucceededAfterOneRestart(trial);
  // One Slurm job per attempt.
  EXPECT_EQ(JobsByName(first_job_).count(JobName(trial)), 2u);

  // Each replica logged where it ran: both nodes were used.
  const std::string master_log = testing::ReadFile(dir + "/job.log");
  std::set<std::string> nodes;
  for (const char* log :
       {"/job.log", "/worker-replica-0.log", "/worker-replica-1.log"}) {
    for (const std::string& n :
         Fields(testing::ReadFile(dir + log), " on node ")) {
      nodes.insert(n);
    }
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"})) << master_log;
  // The group files and rendezvous dirs are gone with the jobs.
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/.cairn-slurm"));
}

TEST_F(SlurmTest, MastersExitEndsTheGroupAndTfConfigHasTheRealPorts) {
  StartServer();
  // The master trains (the toy trainer); the parameter server prints its
  // TF_CONFIG and would serve forever.
  cairn::v1::CreateStudyRequest req;
  req.mutable_study()->set_display_name("ps");
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters {
          parameter_id: "x"
          type: DISCRETE
          discrete_values: [ 1 ]
        }
        metrics { metric_id: "loss" goal: MINIMIZE }
        algorithm: RANDOM_SEARCH
        max_trials: 1
        job_template {
          replicas { type: MASTER count: 1 }
          replicas { type: PARAMETER_SERVER count: 1 }
          env { key: "TOY_STEPS" value: "3" }
        })pb",
      req.mutable_study()->mutable_spec()));
  for (const std::string& arg :
       {std::string("/bin/sh"), std::string("-c"),
        absl::StrCat("echo \"TF_CONFIG=$TF_CONFIG\"; ",
                     "if [ \"$CAIRN_REPLICA\" = master-replica-0 ]; then ",
                     "exec /usr/bin/python3 ", testing::ToyTrainer(),
                     " \"$@\"; fi; exec sleep 600"),
        std::string("replica")}) {
    req.mutable_study()->mutable_spec()->mutable_job_template()->add_command(
        arg);
  }
  Study study;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CreateStudy(&ctx, req, &study).ok());
  }
  Study done = WaitDone(study.name(), 60);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  std::vector<Trial> trials = WaitJobsEnded(study.name(), 60);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state(), Trial::SUCCEEDED)
      << trials[0].ShortDebugString();
  EXPECT_EQ(trials[0].job().state(), TrialJob::SUCCEEDED);
  EXPECT_EQ(trials[0].job().attempts(), 1);
  const auto jobs = JobsByName(first_job_);
  auto job = jobs.find(JobName(trials[0]));
  ASSERT_NE(job, jobs.end());
  EXPECT_EQ(job->second.state, "COMPLETED");

  // The ps was stopped once the master was done, and its TF_CONFIG named the
  // address and port the master's task took at run time.
  const std::string dir = trials[0].job().job_dir();
  const std::string master_log = testing::ReadFile(dir + "/job.log");
  const std::string ps_log = testing::ReadFile(dir + "/ps-replica-0.log");
  // "cairn: master-replica-0 is Slurm task 0 of job J on node N (ADDR:PORT)"
  const size_t at = master_log.find("cairn: master-replica-0 is Slurm task 0");
  ASSERT_NE(at, std::string::npos) << master_log;
  const size_t open = master_log.find('(', at);
  const std::string address =
      master_log.substr(open + 1, master_log.find(')', open) - open - 1);
  EXPECT_NE(ps_log.find(absl::StrCat("\"master\":[\"", address, "\"]")),
            std::string::npos)
      << ps_log << "\n"
      << master_log;
  EXPECT_NE(
      ps_log.find("\"task\":{\"index\":0,\"trial\":\"1\",\"type\":\"ps\"}"),
      std::string::npos)
      << ps_log;
}

}  // namespace
}  // namespace cairn
