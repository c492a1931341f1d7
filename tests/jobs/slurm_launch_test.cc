// The group file of a multi-replica Slurm job, scontrol's node address and
// a replica's container as a task prepares it (the modes that run inside
// the job are tested by slurm_test and slurm_container_test).
#include "jobs/slurm_launch.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "gtest/gtest.h"
#include "jobs/slurm_container.h"
#include "tests/testing/test_util.h"

namespace cairn::jobs {
namespace {

TEST(SlurmGroupTest, RoundTripsThroughJson) {
  SlurmGroup g;
  g.srun = "/usr/bin/srun";
  g.scontrol = "/usr/bin/scontrol";
  g.launcher = "/opt/cairn/cairnd";
  g.run_root = "/jobs/1/2/.cairn-slurm";
  g.grace = absl::Seconds(3);
  g.rendezvous_timeout = absl::Milliseconds(1500);
  g.replicas.push_back({"master-replica-0",
                        {"/usr/bin/python3", "train.py", "--lr=0.1; rm -rf /"},
                        {{"TF_CONFIG", "{\"cluster\": {}}"}, {"A", "x=y"}},
                        "/jobs/1/2",
                        "/jobs/1/2/job.log",
                        std::nullopt});
  g.replicas.push_back(
      {"worker-replica-0", {"train"}, {}, "", "/w.log", std::nullopt});
  absl::StatusOr<SlurmGroup> back = ParseSlurmGroup(SlurmGroupJson(g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->srun, g.srun);
  EXPECT_EQ(back->scontrol, g.scontrol);
  EXPECT_EQ(back->launcher, g.launcher);
  EXPECT_EQ(back->run_root, g.run_root);
  EXPECT_EQ(back->grace, absl::Seconds(3));
  EXPECT_EQ(back->rendezvous_timeout, absl::Milliseconds(1500));
  ASSERT_EQ(back->replicas.size(), 2u);
  EXPECT_EQ(back->replicas[0].name, "master-replica-0");
  EXPECT_EQ(back->replicas[0].argv, g.replicas[0].argv);
  EXPECT_EQ(back->replicas[0].env, g.replicas[0].env);
  EXPECT_EQ(back->replicas[0].working_dir, "/jobs/1/2");
  EXPECT_EQ(back->replicas[1].log_path, "/w.log");
}

TEST(SlurmGroupTest, ContainerReplicasRoundTripWithoutArgv) {
  SlurmGroup g;
  g.containers.runtime = "podman";
  g.containers.pull = "missing";
  g.containers.data_dir = "/var/lib/cairn";
  ContainerJob c;
  c.image = "localhost/trainer:1";
  c.entrypoint = {"python3", "-m", "trainer"};
  c.mounts = {{"/data", "/in", true}};
  c.cpus = 1.5;
  c.memory_bytes = 1 << 30;
  c.pids_limit = 64;
  c.labels = {{"cairn.trial", "3"}};
  g.replicas.push_back({"master-replica-0", {}, {}, "", "/l.log", c});
  g.replicas.push_back(
      {"worker-replica-0", {"train"}, {}, "", "/w.log", std::nullopt});
  absl::StatusOr<SlurmGroup> back = ParseSlurmGroup(SlurmGroupJson(g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->containers.runtime, "podman");
  EXPECT_EQ(back->containers.pull, "missing");
  EXPECT_EQ(back->containers.data_dir, "/var/lib/cairn");
  ASSERT_TRUE(back->replicas[0].container.has_value());
  const ContainerJob& b = *back->replicas[0].container;
  EXPECT_EQ(b.image, c.image);
  EXPECT_EQ(b.entrypoint, c.entrypoint);
  ASSERT_EQ(b.mounts.size(), 1u);
  EXPECT_EQ(b.mounts[0].container_path, "/in");
  EXPECT_TRUE(b.mounts[0].read_only);
  EXPECT_EQ(b.cpus, 1.5);
  EXPECT_EQ(b.memory_bytes, 1 << 30);
  EXPECT_EQ(b.pids_limit, 64);
  EXPECT_EQ(b.labels, c.labels);
  EXPECT_FALSE(back->replicas[1].container.has_value());
  // Without an image, a replica still needs an argv.
  g.replicas[0].container.reset();
  EXPECT_FALSE(ParseSlurmGroup(SlurmGroupJson(g)).ok());
}

TEST(SlurmGroupTest, RefusesMalformedFiles) {
  EXPECT_FALSE(ParseSlurmGroup("").ok());
  EXPECT_FALSE(ParseSlurmGroup("{\"srun\": 1}").ok());
  SlurmGroup g;
  EXPECT_FALSE(ParseSlurmGroup(SlurmGroupJson(g)).ok()) << "no replicas";
  g.replicas.push_back({"master-replica-0", {}, {}, "", "/l", std::nullopt});
  absl::StatusOr<SlurmGroup> no_argv = ParseSlurmGroup(SlurmGroupJson(g));
  ASSERT_FALSE(no_argv.ok());
  EXPECT_NE(no_argv.status().message().find("master-replica-0"),
            std::string::npos);
}

TEST(PrepareSlurmContainerTest, KeepsTheLocalContractWithAPrivateEnvFile) {
  testing::TempDir dir;
  ContainerOptions options;
  options.runtime = "/bin/true";  // Stands in for podman's rm.
  options.data_dir = "/var/lib/cairn";
  ContainerJob job;
  job.image = "localhost/trainer:1";
  job.labels = {{"cairn.study", "4"}, {"cairn.trial", "2"}};
  const std::string metrics = dir.path() + "/hypertune.json";
  const std::map<std::string, std::string> env = {
      {"CAIRN_JOB_DIR", dir.path()},
      {"CAIRN_TOKEN", "secret"},
      {"CLOUD_ML_HP_METRIC_FILE", metrics}};
  const std::string env_file = dir.path() + "/env-0";
  absl::StatusOr<SlurmContainer> c =
      PrepareSlurmContainer(options, job, env, "", env_file, "77");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto has = [&](const std::string& arg) {
    return std::find(c->argv.begin(), c->argv.end(), arg) != c->argv.end();
  };
  EXPECT_TRUE(has("--label=cairn.slurm_job=77"));
  EXPECT_TRUE(has("--label=cairn.data_dir=/var/lib/cairn"));
  EXPECT_TRUE(has("--network=host"));
  EXPECT_TRUE(has("--init"));
  EXPECT_TRUE(has("--env-file=" + env_file));
  EXPECT_TRUE(has("type=bind,source=" + metrics +
                  ",destination=/tmp/hypertune/output.metrics"));
  EXPECT_EQ(c->argv.back(), "localhost/trainer:1");
  // The token travels in the 0600 file, never on the command line.
  for (const std::string& a : c->argv) {
    EXPECT_EQ(a.find("secret"), std::string::npos) << a;
  }
  struct stat st;
  ASSERT_EQ(stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(testing::ReadFile(env_file).find("CAIRN_TOKEN=secret\n"),
            std::string::npos);
  EXPECT_EQ(stat(metrics.c_str(), &st), 0) << "hypertune file not created";
  CleanUpSlurmContainer(*c, absl::Seconds(1));
  EXPECT_NE(stat(env_file.c_str(), &st), 0) << "env file left behind";

  options.runtime = "no-such-podman";
  absl::StatusOr<SlurmContainer> missing =
      PrepareSlurmContainer(options, job, env, "", env_file, "77");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("no-such-podman"),
            std::string::npos);
}

TEST(SlurmContainerRuntimeTest, TakesANameOrAnAbsolutePath) {
  EXPECT_EQ(SlurmContainerRuntime("").value(), "podman");
  EXPECT_EQ(SlurmContainerRuntime("none").value(), "");
  EXPECT_EQ(SlurmContainerRuntime("/opt/podman/bin/podman").value(),
            "/opt/podman/bin/podman");
  for (const char* bad :
       {"./podman", "bin/podman", "podman --root=/x", "/usr/bin/pod\nman"}) {
    absl::StatusOr<std::string> r = SlurmContainerRuntime(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--container-runtime"),
              std::string::npos);
  }
}

TEST(ParseNodeAddrTest, FindsTheNodeAddrField) {
  EXPECT_EQ(
      ParseNodeAddr("NodeName=n2 Arch=x86_64 CoresPerSocket=1 "
                    "NodeAddr=10.1.2.3 NodeHostName=vm Version=22.05.8\n"),
      "10.1.2.3");
  EXPECT_EQ(ParseNodeAddr("Node n9 not found\n"), "");
}

}  // namespace
}  // namespace cairn::jobs
