// `cairn trial stop` and `cairn study stop` against a real cairnd whose jobs
// are real processes that ignore SIGTERM: each stop ends the job's process
// (SIGKILL after the 1 s grace), also when its trial or study ended while
// the process ran, and says so.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_util.h"

namespace {

using json = nlohmann::json;
using ::cairn::testing::CairndProcess;
using ::cairn::testing::CommandResult;
using ::cairn::testing::RunCommand;
using ::testing::HasSubstr;

// A job that ignores SIGTERM and runs until it is killed.
constexpr char kStudy[] = R"(parameters:
  - {parameter_id: x, type: DOUBLE, min_value: 0, max_value: 1}
metrics:
  - {metric_id: loss, goal: MINIMIZE}
max_trials: MAX
max_parallel_trials: MAX
job_template:
  command: [/bin/sh, -c, "trap '' TERM; while :; do sleep 0.1; done", sh]
)";

class CliStopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<CairndProcess>(
        dir_.path() + "/data",
        std::vector<std::string>{"--grace-seconds", "1"});
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }

  CommandResult Cairn(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {cairn::testing::BinDir() + "/cairn",
                                     "--server", server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  std::string CairnOk(const std::vector<std::string>& args) {
    const CommandResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << ": " << r.err;
    return r.out;
  }

  // Creates study `name` of `trials` trials, each a job that ignores
  // SIGTERM.
  void CreateStudy(const std::string& name, int trials) {
    std::string text = kStudy;
    for (size_t at; (at = text.find("MAX")) != std::string::npos;) {
      text.replace(at, 3, std::to_string(trials));
    }
    const std::string path = dir_.path() + "/" + name + ".yaml";
    std::ofstream(path) << text;
    CairnOk({"study", "create", "--config", path});
  }

  json Trial(const std::string& study, int id) {
    return json::parse(
        CairnOk({"trial", "get", study, std::to_string(id), "--json"}), nullptr,
        false);
  }

  // The pid of the trial's job once it runs (0 after 30 s).
  int64_t RunningPid(const std::string& study, int id) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      const json t = Trial(study, id);
      if (t.value("/job/state"_json_pointer, "") == "RUNNING" &&
          t.contains("/job/pid"_json_pointer)) {
        return std::stoll(t["job"]["pid"].get<std::string>());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "trial " << id << " of " << study << " never ran";
    return 0;
  }

  // Creates study `name` of one trial and completes that trial through the
  // CLI while its job runs; the job's pid (it runs on).
  int64_t CompleteWhileItRuns(const std::string& name) {
    CreateStudy(name, 1);
    const int64_t pid = RunningPid(name, 1);
    CairnOk({"trial", "complete", name, "1", "loss=0.5"});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(pid > 0 && Alive(pid)) << "the job ran on";
    return pid;
  }

  static bool Alive(int64_t pid) {
    return std::filesystem::exists("/proc/" + std::to_string(pid));
  }

  // Waits up to 10 s (the grace is 1 s) for `pid` to be gone.
  static bool Gone(int64_t pid) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (Alive(pid)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  cairn::testing::TempDir dir_;
  std::unique_ptr<CairndProcess> server_;
};

TEST_F(CliStopTest, TrialStopAndStudyStopEndRunningJobs) {
  CreateStudy("both", 2);
  const int64_t first = RunningPid("both", 1);
  const int64_t second = RunningPid("both", 2);
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  EXPECT_EQ(CairnOk({"trial", "stop", "both", "1"}),
            "studies/1/trials/1 STOPPING\n");
  EXPECT_TRUE(Gone(first)) << server_->Log(2000);
  EXPECT_TRUE(Alive(second));
  EXPECT_THAT(CairnOk({"study", "stop", "both"}), HasSubstr("stopped"));
  EXPECT_TRUE(Gone(second)) << server_->Log(2000);
  for (int id : {1, 2}) {
    const json t = Trial("both", id);
    EXPECT_EQ(t["state"], "CANCELLED") << t;
    EXPECT_EQ(t["job"]["state"], "CANCELLED") << t;
  }
}

TEST_F(CliStopTest, TrialStopEndsTheJobOfACompletedTrial) {
  const int64_t pid = CompleteWhileItRuns("done-trial");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(CairnOk({"trial", "stop", "done-trial", "1"}),
            "studies/1/trials/1 SUCCEEDED; its job still runs and is being "
            "stopped\n");
  EXPECT_TRUE(Gone(pid)) << server_->Log(2000);
  json t = Trial("done-trial", 1);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (t["job"]["state"] != "CANCELLED" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t = Trial("done-trial", 1);
  }
  EXPECT_EQ(t["job"]["state"], "CANCELLED") << t;
  EXPECT_EQ(t["state"], "SUCCEEDED") << t;
  const CommandResult again = Cairn({"trial", "stop", "done-trial", "1"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("already SUCCEEDED"));
}

TEST_F(CliStopTest, StudyStopEndsTheJobsOfACompletedStudy) {
  const int64_t pid = CompleteWhileItRuns("done-study");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(CairnOk({"study", "stop", "done-study"}),
            "studies/1 is already COMPLETED; 1 job(s) still running are "
            "being stopped\n");
  EXPECT_TRUE(Gone(pid)) << server_->Log(2000);
  EXPECT_EQ(Trial("done-study", 1)["state"], "SUCCEEDED");
}

TEST_F(CliStopTest, DeletingAStudyEndsItsJobs) {
  CreateStudy("doomed", 1);
  const int64_t pid = RunningPid("doomed", 1);
  ASSERT_GT(pid, 0);
  CairnOk({"study", "delete", "doomed"});
  EXPECT_TRUE(Gone(pid)) << server_->Log(2000);
}

}  // namespace
