// ReplicaGroup with real processes on the local executor: the master's exit
// stops the other replicas, another replica's death stops the group and is
// its outcome, Terminate() ends every process, a failed start leaves
// nothing behind.
#include "jobs/replica_group.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"
#include "util/clock.h"

namespace cairn::jobs {
namespace {

class RealClock : public util::Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
};

bool Alive(int64_t pid) { return ProcessStartTicks(pid) != 0; }

class ReplicaGroupTest : public ::testing::Test {
 protected:
  // A replica running `script` under /bin/sh, logging to NAME.log.
  JobSpec Spec(const std::string& name, const std::string& script) {
    JobSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.log_path = dir_.path() + "/" + name + ".log";
    return spec;
  }

  absl::StatusOr<ReplicaGroup> StartGroup(
      const std::vector<std::string>& scripts,
      absl::Duration grace = absl::Seconds(5)) {
    std::vector<std::string> names;
    std::vector<JobSpec> specs;
    for (size_t i = 0; i < scripts.size(); ++i) {
      names.push_back(i == 0 ? "master-replica-0"
                             : "worker-replica-" + std::to_string(i - 1));
      specs.push_back(Spec(names.back(), scripts[i]));
    }
    return ReplicaGroup::Start(executor_.get(), names, specs, grace);
  }

  // Polls until the outcome (fails after 20 s).
  GroupExit Await(ReplicaGroup& group) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      if (std::optional<GroupExit> exit = group.Poll()) return *exit;
      absl::SleepFor(absl::Milliseconds(10));
    }
    ADD_FAILURE() << "group did not end";
    return GroupExit{};
  }

  void ExpectAllEnded(const ReplicaGroup& group) {
    for (const RunningReplica& p : group.processes()) {
      EXPECT_FALSE(Alive(p.handle.pid)) << p.name << " still runs";
      EXPECT_TRUE(p.exit.has_value()) << p.name << " not reaped";
    }
  }

  testing::TempDir dir_;
  RealClock clock_;
  std::unique_ptr<Executor> executor_ = NewLocalProcessExecutor(&clock_);
};

TEST_F(ReplicaGroupTest, MasterExitStopsTheWorkersAndIsTheOutcome) {
  // The workers would run for a minute; a TERM trap writes a mark first.
  // The master exits once both have set their trap.
  const std::string ready = dir_.path() + "/ready";
  const std::string worker = "trap 'echo got-term; exit 143' TERM; echo >> " +
                             ready + "; sleep 60 & wait";
  const std::string master = "while [ \"$(wc -l < " + ready +
                             " 2>/dev/null)\" != 2 ]; do sleep 0.05; done";
  absl::StatusOr<ReplicaGroup> group = StartGroup({master, worker, worker});
  ASSERT_TRUE(group.ok()) << group.status();
  const absl::Time start = absl::Now();
  const GroupExit exit = Await(*group);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_TRUE(exit.by_master);
  EXPECT_TRUE(exit.exit.ok()) << exit.ToString();
  EXPECT_EQ(exit.ToString(), "exit code 0");
  EXPECT_EQ(exit.pid, group->master().pid);
  ExpectAllEnded(*group);
  std::ifstream log(dir_.path() + "/worker-replica-1.log");
  std::string text((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(text.find("got-term"), std::string::npos)
      << "workers get SIGTERM first: " << text;
}

TEST_F(ReplicaGroupTest, WorkerDeathStopsTheGroupAndIsTheOutcome) {
  absl::StatusOr<ReplicaGroup> group =
      StartGroup({"sleep 60", "sleep 60", "sleep 0.2; kill -9 $$"});
  ASSERT_TRUE(group.ok()) << group.status();
  const GroupExit exit = Await(*group);
  EXPECT_FALSE(exit.by_master);
  EXPECT_EQ(exit.replica, "worker-replica-1");
  EXPECT_EQ(exit.exit.signal, SIGKILL);
  EXPECT_EQ(exit.ToString(), "worker-replica-1 killed by signal 9");
  ExpectAllEnded(*group);
  // The master was stopped, not the outcome.
  EXPECT_EQ(group->processes()[0].exit->signal, SIGTERM);
}

TEST_F(ReplicaGroupTest, WorkerThatFinishesEarlyLeavesTheGroupRunning) {
  absl::StatusOr<ReplicaGroup> group =
      StartGroup({"sleep 0.5; exit 3", "exit 0"});
  ASSERT_TRUE(group.ok()) << group.status();
  const GroupExit exit = Await(*group);
  EXPECT_TRUE(exit.by_master);
  EXPECT_EQ(exit.exit.exit_code, 3);
  EXPECT_EQ(group->processes()[1].exit->exit_code, 0);
}

TEST_F(ReplicaGroupTest, TerminateEndsEveryProcessEvenOneIgnoringTerm) {
  // worker-replica-1 ignores SIGTERM: SIGKILL follows after the grace.
  const std::string ready = dir_.path() + "/ready";
  absl::StatusOr<ReplicaGroup> group = StartGroup(
      {"sleep 60", "sleep 60",
       "trap '' TERM; touch " + ready + "; sleep 60 & wait; sleep 60"},
      absl::Milliseconds(300));
  ASSERT_TRUE(group.ok()) << group.status();
  for (int i = 0; i < 2000 && !std::filesystem::exists(ready); ++i) {
    absl::SleepFor(absl::Milliseconds(5));  // Until the trap is set.
  }
  EXPECT_FALSE(group->Poll().has_value());
  group->Terminate(absl::Milliseconds(300));
  const GroupExit exit = Await(*group);
  EXPECT_TRUE(exit.by_master);
  EXPECT_EQ(exit.exit.signal, SIGTERM);
  ExpectAllEnded(*group);
  EXPECT_EQ(group->processes()[2].exit->signal, SIGKILL);
}

TEST_F(ReplicaGroupTest, FailedStartKillsTheReplicasAlreadyStarted) {
  std::vector<std::string> names = {"master-replica-0", "worker-replica-0"};
  const std::string pid_file = dir_.path() + "/master.pid";
  std::vector<JobSpec> specs = {
      Spec("m", "echo $$ > " + pid_file + "; exec sleep 60"), Spec("w", "")};
  specs[1].argv = {"/nonexistent/trainer"};
  absl::StatusOr<ReplicaGroup> group =
      ReplicaGroup::Start(executor_.get(), names, specs, absl::Seconds(5));
  ASSERT_FALSE(group.ok());
  EXPECT_NE(group.status().message().find("worker-replica-0: "),
            std::string::npos)
      << group.status();
  // The master (which may not have written its pid yet) is gone.
  int64_t pid = 0;
  std::ifstream(pid_file) >> pid;
  if (pid > 0) EXPECT_FALSE(Alive(pid)) << "master " << pid << " survived";
}

}  // namespace
}  // namespace cairn::jobs
