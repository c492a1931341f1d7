// Multi-replica trials through a real cairnd with real processes:
//  - examples/pytorch_gloo (torch.distributed over gloo, master + 2
//    workers) created from its YAML with `cairn study create`; one worker is
//    killed -9 mid-run, the group restarts from its checkpoint and the trial
//    completes with the master's metric (skipped without python3-torch);
//  - cairnd killed -9 with a group running: the restarted cairnd kills
//    every replica it left and starts the group again.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "jobs/executor.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Trial;
using cairn::v1::TrialJob;

bool Alive(int64_t pid) { return jobs::ProcessStartTicks(pid) != 0; }

class ReplicasTest : public ::testing::Test {
 protected:
  void StartServer() {
    server_ = std::make_unique<testing::CairndProcess>(
        dir_.path() + "/data",
        std::vector<std::string>{"--gpus", "0", "--grace-seconds", "2"});
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    stub_ = server_->NewStub();
  }

  // The trial, or an empty one while it does not exist yet (the job runner
  // creates it on its next pass).
  Trial GetTrial(const std::string& name) {
    cairn::v1::GetTrialRequest req;
    req.set_name(name);
    Trial out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->GetTrial(&ctx, req, &out);
    EXPECT_TRUE(st.ok() || st.error_code() == grpc::StatusCode::NOT_FOUND)
        << st.error_message();
    return out;
  }

  // Polls trial `name` until `done` holds (fails after `seconds`).
  template <typename Pred>
  Trial WaitFor(const std::string& name, int seconds, Pred done,
                const std::string& what) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    Trial t;
    while (std::chrono::steady_clock::now() < deadline) {
      t = GetTrial(name);
      if (done(t)) return t;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "waited " << seconds << " s for " << what << ": "
                  << t.ShortDebugString() << "\ncairnd log:\n"
                  << server_->Log(4000);
    return t;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::CairndProcess> server_;
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

int64_t LastStep(const Trial& t) {
  return t.measurements().empty()
             ? -1
             : t.measurements(t.measurements_size() - 1).step_count();
}

TEST_F(ReplicasTest, PyTorchGlooSurvivesAWorkerKill) {
  if (!testing::HaveTorch()) {
    GTEST_SKIP() << "python3-torch is not installed (apt-get install "
                    "python3-torch): the PyTorch gloo example cannot run";
  }
  StartServer();
  testing::CommandResult created =
      testing::CreateGlooStudy(server_->address(), dir_.path());
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string trial = "studies/1/trials/1";

  // Wait for a checkpoint (reported at step 10), then kill worker 1.
  Trial t = WaitFor(
      trial, 120,
      [](const Trial& t) {
        return t.job().replica_processes_size() == 3 && LastStep(t) >= 10;
      },
      "the 3 replicas to report step 10");
  ASSERT_EQ(t.job().replica_processes_size(), 3);
  std::vector<int64_t> first_pids;
  for (const auto& p : t.job().replica_processes()) {
    first_pids.push_back(p.pid());
  }
  ASSERT_EQ(t.job().replica_processes(2).name(), "worker-replica-1");
  ASSERT_EQ(kill(static_cast<pid_t>(first_pids[2]), SIGKILL), 0);

  t = WaitFor(
      trial, 180, [](const Trial& t) { return t.state() == Trial::SUCCEEDED; },
      "the trial to succeed after the restart");
  testing::ExpectGlooSucceededAfterOneRestart(t);
  for (int64_t pid : first_pids) EXPECT_FALSE(Alive(pid)) << pid;
}

TEST_F(ReplicasTest, RestartedCairndKillsEveryReplicaAndResumesTheGroup) {
  StartServer();
  // A bad replicas config is refused by `cairn study create`, naming it.
  const std::string bad = dir_.path() + "/bad.yaml";
  std::ofstream(bad) << "parameters: [{parameter_id: x, type: DISCRETE, "
                        "discrete_values: [1]}]\n"
                        "metrics: [{metric_id: loss, goal: MINIMIZE}]\n"
                        "job_template: {command: [train], replicas: "
                        "[{type: MASTER, count: 2}]}\n";
  testing::CommandResult refused = testing::RunCommand(
      {testing::BinDir() + "/cairn", "--server", server_->address(), "study",
       "create", "--config", bad});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("job_template.replicas[0].count"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("2"), std::string::npos) << refused.err;

  // Each replica says who it is, then sleeps.
  cairn::v1::CreateStudyRequest req;
  req.mutable_study()->set_display_name("sleepers");
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters {
          parameter_id: "x"
          type: DISCRETE
          discrete_values: [ 1, 2 ]
        }
        metrics { metric_id: "loss" goal: MINIMIZE }
        algorithm: RANDOM_SEARCH
        max_trials: 1
        job_template {
          command: "/bin/sh"
          command: "-c"
          command: "echo I am $CAIRN_REPLICA; exec sleep 60"
          command: "sh"
          replicas { type: MASTER count: 1 }
          replicas { type: WORKER count: 2 }
          replicas { type: PARAMETER_SERVER count: 1 }
        }
      )pb",
      req.mutable_study()->mutable_spec()));
  cairn::v1::Study study;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CreateStudy(&ctx, req, &study).ok());
  }
  const std::string trial = study.name() + "/trials/1";
  Trial t = WaitFor(
      trial, 30,
      [](const Trial& t) { return t.job().replica_processes_size() == 4; },
      "4 replicas");
  std::vector<int64_t> old_pids;
  for (const auto& p : t.job().replica_processes()) old_pids.push_back(p.pid());
  for (int64_t pid : old_pids) ASSERT_TRUE(Alive(pid)) << pid;

  server_->Kill9();
  // The replicas outlive cairnd only as orphans: PDEATHSIG kills them, or
  // the restarted cairnd does. Either way none may remain once it runs.
  std::string error;
  ASSERT_TRUE(server_->Start(&error)) << error;
  stub_ = server_->NewStub();
  t = WaitFor(
      trial, 30,
      [&](const Trial& t) {
        return t.job().attempts() == 2 && t.job().replica_processes_size() == 4;
      },
      "the group to resume");
  for (int64_t pid : old_pids) EXPECT_FALSE(Alive(pid)) << pid;
  for (const auto& p : t.job().replica_processes()) {
    EXPECT_TRUE(Alive(p.pid())) << p.name();
  }
  // Each replica's log, through `cairn trial logs --replica`.
  auto logs = [&](const std::string& replica) {
    std::vector<std::string> argv = {testing::BinDir() + "/cairn",
                                     "--server",
                                     server_->address(),
                                     "trial",
                                     "logs",
                                     "sleepers",
                                     "1"};
    if (!replica.empty()) {
      argv.push_back("--replica");
      argv.push_back(replica);
    }
    return testing::RunCommand(argv);
  };
  for (const std::string replica : {"", "worker-replica-1", "ps-replica-0"}) {
    const std::string who = replica.empty() ? "master-replica-0" : replica;
    const std::string want = "I am " + who;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    testing::CommandResult r = logs(replica);
    while (r.out.find(want) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      r = logs(replica);
    }
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(want), std::string::npos) << who << ": " << r.out;
    EXPECT_NE(r.out.find("=== cairn: attempt 2 (resume)"), std::string::npos)
        << who << ": " << r.out;
  }
  testing::CommandResult unknown = logs("worker-replica-7");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("worker-replica-7"), std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("ps-replica-0"), std::string::npos) << unknown.err;
  // Stopping the study ends every replica.
  cairn::v1::SetStudyStateRequest stop;
  stop.set_name(study.name());
  stop.set_state(cairn::v1::Study::INACTIVE);
  cairn::v1::Study out;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->SetStudyState(&ctx, stop, &out).ok());
  std::vector<int64_t> new_pids;
  for (const auto& p : t.job().replica_processes()) new_pids.push_back(p.pid());
  t = WaitFor(
      trial, 30,
      [](const Trial& t) { return !t.job().replica_processes_size(); },
      "the group to stop");
  EXPECT_EQ(t.job().state(), TrialJob::CANCELLED);
  for (int64_t pid : new_pids) EXPECT_FALSE(Alive(pid)) << pid;
}

}  // namespace
}  // namespace cairn
