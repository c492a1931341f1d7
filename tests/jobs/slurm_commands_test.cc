// sbatch argv building, squeue parsing and Slurm state mapping: no cluster.
#include "jobs/slurm_commands.h"

#include <signal.h>

#include <algorithm>

#include "gtest/gtest.h"

namespace cairn::jobs {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

JobSpec Spec() {
  JobSpec spec;
  spec.argv = {"/usr/bin/python3", "train.py", "--lr=0.1; rm -rf /"};
  spec.env = {{"CAIRN_JOB_DIR", "/jobs/1/2"},
              {"CUDA_VISIBLE_DEVICES", "0,1"},
              {"A", "x,y=z"}};
  spec.log_path = "/jobs/1/2/job.log";
  spec.name = "cairn-studies-1-trials-2";
  spec.gpus = 2;
  spec.time_limit = absl::Seconds(61);
  return spec;
}

TEST(SbatchArgvTest, CarriesEverySettingAndTheArgvLast) {
  SlurmOptions options;
  options.partition = "gpu";
  options.account = "ml";
  options.extra_args = {"--qos=low"};
  options.grace_period = absl::Seconds(5);
  JobUser user;
  user.name = "nobody";
  user.uid = 65534;
  user.gid = 65534;
  user.switch_user = true;
  const std::vector<std::string> argv =
      SbatchArgv("/usr/bin/sbatch", options, user, Spec(), "/tmp/x/exec.sh");
  EXPECT_EQ(argv[0], "/usr/bin/sbatch");
  for (const char* want :
       {"--parsable", "--job-name=cairn-studies-1-trials-2",
        "--output=/jobs/1/2/job.log", "--open-mode=append", "--requeue",
        "--export=ALL", "--gres=gpu:2", "--time=2", "--signal=B:TERM@5",
        "--partition=gpu", "--account=ml", "--uid=65534", "--gid=65534",
        "--qos=low"}) {
    EXPECT_TRUE(Has(argv, want)) << want;
  }
  // The script, then the job's argv untouched (no shell quoting).
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[argv.size() - 4], "/tmp/x/exec.sh");
  EXPECT_EQ(argv.back(), "--lr=0.1; rm -rf /");
}

TEST(SbatchArgvTest, NoGpusNoLimitNoUserSwitch) {
  JobSpec spec = Spec();
  spec.gpus = 0;
  spec.time_limit = absl::InfiniteDuration();
  const std::vector<std::string> argv =
      SbatchArgv("/s", SlurmOptions(), JobUser(), spec, "/e");
  for (const std::string& a : argv) {
    EXPECT_NE(a.rfind("--gres", 0), 0u) << a;
    EXPECT_NE(a.rfind("--time", 0), 0u) << a;
    EXPECT_NE(a.rfind("--uid", 0), 0u) << a;
    EXPECT_NE(a.rfind("--partition", 0), 0u) << a;
  }
}

TEST(SbatchGroupArgvTest, OneTaskPerReplicaSpreadOverNodes) {
  SlurmOptions options;
  options.partition = "gpu";
  options.extra_args = {"--qos=low"};
  std::vector<JobSpec> specs(3, Spec());
  specs[1].gpus = 0;
  specs[2].gpus = 4;  // The most any replica asks for, for every task.
  specs[1].log_path = "/jobs/1/2/worker-replica-0.log";
  const std::vector<std::string> argv = SbatchGroupArgv(
      "/usr/bin/sbatch", options, JobUser(), specs, "/tmp/x/exec.sh",
      {"/opt/cairnd", "--slurm-batch", "/jobs/1/2/.cairn-slurm/g.json"});
  for (const char* want :
       {"--parsable", "--job-name=cairn-studies-1-trials-2",
        "--output=/jobs/1/2/job.log", "--requeue", "--ntasks=3", "--spread-job",
        "--gpus-per-task=4", "--time=2", "--partition=gpu", "--qos=low"}) {
    EXPECT_TRUE(Has(argv, want)) << want;
  }
  for (const std::string& a : argv) {
    EXPECT_NE(a.rfind("--gres", 0), 0u) << a;
    EXPECT_NE(a, "--ntasks=1");
  }
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[argv.size() - 4], "/tmp/x/exec.sh");
  EXPECT_EQ(argv[argv.size() - 3], "/opt/cairnd");
  EXPECT_EQ(argv.back(), "/jobs/1/2/.cairn-slurm/g.json");

  for (JobSpec& s : specs) s.gpus = 0;
  for (const std::string& a :
       SbatchGroupArgv("/s", options, JobUser(), specs, "/e", {"/l"})) {
    EXPECT_NE(a.rfind("--gpus", 0), 0u) << a;
  }
  // A one-process job is not spread.
  EXPECT_FALSE(
      Has(SbatchArgv("/s", options, JobUser(), Spec(), "/e"), "--spread-job"));
}

TEST(SrunArgvTest, OneStepThatEndsWhenATaskFails) {
  EXPECT_EQ(
      SrunArgv("/usr/bin/srun", 3,
               {"/opt/cairnd", "--slurm-replica", "/j/g.json"}),
      (std::vector<std::string>{"/usr/bin/srun", "--kill-on-bad-exit=1",
                                "--ntasks=3", "--input=none", "/opt/cairnd",
                                "--slurm-replica", "/j/g.json"}));
}

TEST(SlurmEnvironmentTest, CleanBaseAndSpecEnvWithoutCudaDevices) {
  JobUser user;
  user.name = "nobody";
  const std::vector<std::string> env =
      SlurmEnvironment(user, Spec(), "/c/slurm.conf");
  EXPECT_TRUE(Has(env, "SLURM_CONF=/c/slurm.conf"));
  EXPECT_TRUE(Has(env, "HOME=/jobs/1/2"));
  EXPECT_TRUE(Has(env, "A=x,y=z"));
  EXPECT_TRUE(Has(env, "USER=nobody"));
  for (const std::string& kv : env) {
    EXPECT_NE(kv.rfind("CUDA_VISIBLE_DEVICES=", 0), 0u);
  }
  EXPECT_NE(SlurmReservedVariableReason("SBATCH_PARTITION"), "");
  EXPECT_NE(SlurmReservedVariableReason("SLURM_CONF"), "");
  EXPECT_EQ(SlurmReservedVariableReason("MY_VAR"), "");
}

TEST(ParseSqueueTest, ParsesLinesAndRejectsGarbage) {
  auto jobs = ParseSqueue(
      "3|FAILED|NonZeroExitCode|0|768|\n12|PENDING|BeginTime|1||\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(jobs->at(3).state, "FAILED");
  EXPECT_EQ(jobs->at(3).wait_status, 768);
  EXPECT_EQ(jobs->at(12).restarts, 1);
  EXPECT_EQ(jobs->at(12).reason, "BeginTime");
  EXPECT_FALSE(ParseSqueue("x|RUNNING\n").ok());
  EXPECT_TRUE(ParseSqueue("").ok());
}

SlurmJobStatus Status(const std::string& state, int wait_status = 0) {
  SlurmJobStatus s;
  s.id = 7;
  s.state = state;
  s.reason = "None";
  s.wait_status = wait_status;
  return s;
}

TEST(SlurmExitTest, MapsEveryState) {
  for (const char* running : {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING",
                              "REQUEUED", "SUSPENDED", "REQUEUE_HOLD"}) {
    EXPECT_FALSE(SlurmExit(Status(running)).has_value()) << running;
  }
  std::optional<JobExit> ok = SlurmExit(Status("COMPLETED", 0));
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok->ok());
  std::optional<JobExit> three = SlurmExit(Status("FAILED", 3 << 8));
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->exit_code, 3);
  EXPECT_EQ(three->signal, 0);
  EXPECT_NE(three->ToString().find("FAILED"), std::string::npos);
  std::optional<JobExit> usage = SlurmExit(Status("FAILED", 2 << 8));
  ASSERT_TRUE(usage.has_value());
  EXPECT_TRUE(usage->IsUsageError());
  std::optional<JobExit> signalled = SlurmExit(Status("FAILED", SIGSEGV));
  ASSERT_TRUE(signalled.has_value());
  EXPECT_EQ(signalled->signal, SIGSEGV);
  std::optional<JobExit> launch = SlurmExit(Status("FAILED", 0));
  ASSERT_TRUE(launch.has_value());
  EXPECT_FALSE(launch->ok());
  EXPECT_EQ(SlurmExit(Status("CANCELLED"))->signal, SIGTERM);
  EXPECT_EQ(SlurmExit(Status("PREEMPTED"))->signal, SIGTERM);
  for (const char* killed :
       {"TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    std::optional<JobExit> e = SlurmExit(Status(killed));
    ASSERT_TRUE(e.has_value()) << killed;
    EXPECT_EQ(e->signal, SIGKILL) << killed;
    EXPECT_NE(e->ToString().find(killed), std::string::npos);
  }
}

TEST(ParseSbatchIdTest, ParsesParsableOutput) {
  EXPECT_EQ(*ParseSbatchId("42\n"), 42);
  EXPECT_EQ(*ParseSbatchId("43;cluster\n"), 43);
  EXPECT_FALSE(ParseSbatchId("sbatch: error").ok());
}

}  // namespace
}  // namespace cairn::jobs
