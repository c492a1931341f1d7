// The podman command line of container jobs (no runtime needed).
#include "jobs/container_command.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn::jobs {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

JobSpec Spec() {
  JobSpec spec;
  spec.argv = {"--lr=0.1", "--job-dir=/jobs/t1"};
  spec.env = {{"CAIRN_JOB_DIR", "/jobs/t1"},
              {"CLOUD_ML_HP_METRIC_FILE", "/jobs/t1/hypertune.metrics"},
              {"CAIRN_TOKEN", "secret"}};
  ContainerJob c;
  c.image = "localhost/trainer:1";
  c.labels = {{"cairn.study", "studies/3"},
              {"cairn.trial", "7"},
              {"cairn.attempt", "2"},
              {"cairn.replica", "master"}};
  spec.container = c;
  return spec;
}

ContainerOptions Options() {
  ContainerOptions o;
  o.runtime = "/usr/bin/podman";
  o.data_dir = "/var/lib/cairn";
  o.grace_period = absl::Milliseconds(2500);
  return o;
}

JobUser Nobody() {
  JobUser u;
  u.uid = 65534;
  u.gid = 65534;
  return u;
}

TEST(ContainerCommandTest, RunsAsTheJobUserOnTheHostNetworkWithTheJobDir) {
  absl::StatusOr<std::vector<std::string>> argv =
      PodmanRunArgv(Options(), Nobody(), Spec(), "NAME", "/state/NAME");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ((*argv)[0], "/usr/bin/podman");
  EXPECT_THAT(*argv, Contains("--user=65534:65534"));
  EXPECT_THAT(*argv, Contains("--network=host"));
  EXPECT_THAT(*argv, Contains("--init"));
  EXPECT_THAT(*argv, Contains("--pull=never"));
  EXPECT_THAT(*argv, Contains("--stop-timeout=3"));
  EXPECT_THAT(*argv, Contains("--env-file=/state/NAME"));
  EXPECT_THAT(*argv, Contains("--label=cairn.data_dir=/var/lib/cairn"));
  EXPECT_THAT(*argv, Contains("--label=cairn.attempt=2"));
  EXPECT_THAT(*argv, Contains("--workdir=/jobs/t1"));
  EXPECT_THAT(*argv,
              Contains("type=bind,source=/jobs/t1,destination=/jobs/t1"));
  EXPECT_THAT(*argv, Contains("type=bind,source=/jobs/t1/hypertune.metrics,"
                              "destination=/tmp/hypertune/output.metrics"));
  // The token travels in the env file, never on the command line.
  for (const std::string& a : *argv) EXPECT_THAT(a, Not(HasSubstr("secret")));
  // The image, then the trial's arguments, last.
  std::vector<std::string> tail(argv->end() - 3, argv->end());
  EXPECT_THAT(tail, ElementsAre("localhost/trainer:1", "--lr=0.1",
                                "--job-dir=/jobs/t1"));
}

TEST(ContainerCommandTest, LimitsDevicesEntrypointAndSdk) {
  JobSpec spec = Spec();
  spec.env["CAIRN_PYTHON_SDK"] = "/opt/cairn/python";
  spec.container->cpus = 1.5;
  spec.container->memory_bytes = 1 << 30;
  spec.container->pids_limit = 512;
  spec.container->devices = {"/dev/nvidia1"};
  spec.container->entrypoint = {"python3", "-m", "trainer.task"};
  spec.container->mounts = {{"/data/in", "/opt/ml/input", true}};
  absl::StatusOr<std::vector<std::string>> argv =
      PodmanRunArgv(Options(), Nobody(), spec, "N", "/e");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, Contains("--cpus=1.5"));
  EXPECT_THAT(*argv, Contains("--memory=1073741824b"));
  EXPECT_THAT(*argv, Contains("--pids-limit=512"));
  EXPECT_THAT(*argv, Contains("--device=/dev/nvidia1"));
  EXPECT_THAT(*argv,
              Contains("--entrypoint=[\"python3\",\"-m\",\"trainer.task\"]"));
  EXPECT_THAT(*argv, Contains("type=bind,source=/opt/cairn/python,"
                              "destination=/opt/cairn/python,ro=true"));
  EXPECT_THAT(*argv, Contains("type=bind,source=/data/in,"
                              "destination=/opt/ml/input,ro=true"));
}

TEST(ContainerCommandTest, RefusesWhatWouldChangePodmansMeaning) {
  JobSpec spec = Spec();
  spec.container->image = "--privileged";
  absl::StatusOr<std::vector<std::string>> argv =
      PodmanRunArgv(Options(), Nobody(), spec, "N", "/e");
  EXPECT_EQ(argv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(argv.status().message(), HasSubstr("--privileged"));
  spec = Spec();
  spec.container->mounts = {{"/data,ro=false", "/x", true}};
  argv = PodmanRunArgv(Options(), Nobody(), spec, "N", "/e");
  EXPECT_EQ(argv.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(argv.status().message(), HasSubstr("/data,ro=false"));
}

TEST(ContainerCommandTest, NameIsStableAndUniquePerAttempt) {
  const ContainerJob job = *Spec().container;
  const std::string name = ContainerName("/var/lib/cairn", job);
  EXPECT_EQ(name, ContainerName("/var/lib/cairn", job));
  EXPECT_THAT(name, HasSubstr("-studies-3-t7-a2-master"));
  EXPECT_NE(name, ContainerName("/other/cairn", job));
  ContainerJob next = job;
  next.labels["cairn.attempt"] = "3";
  EXPECT_NE(name, ContainerName("/var/lib/cairn", next));
}

TEST(ContainerCommandTest, EnvFileCarriesTheJobsVariables) {
  absl::StatusOr<std::string> env = ContainerEnvFile(Spec());
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_THAT(*env, HasSubstr("CAIRN_TOKEN=secret\n"));
  EXPECT_THAT(*env, HasSubstr("HOME=/jobs/t1\n"));
  EXPECT_THAT(*env, HasSubstr("LANG=C.UTF-8\n"));
  JobSpec bad = Spec();
  bad.env["EVIL"] = "a\nCAIRN_TOKEN=other";
  EXPECT_EQ(ContainerEnvFile(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A temp dir standing in for /dev (and /etc/cdi): regular files as nodes.
class GpuDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cairn-gpus-XXXXXX";
    root_ = mkdtemp(tmpl);
    roots_.dev = root_ + "/dev";
    roots_.cdi = {root_ + "/cdi"};
    roots_.lib_dirs = {root_ + "/lib"};
    roots_.bin_dir = root_ + "/bin";
    std::filesystem::create_directories(roots_.lib_dirs[0]);
    std::filesystem::create_directories(roots_.bin_dir);
    std::filesystem::create_directories(roots_.dev);
    std::filesystem::create_directories(roots_.cdi[0]);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Touch(const std::string& path) { std::ofstream(path) << "x"; }

  std::string root_;
  GpuDeviceRoots roots_;
};

TEST_F(GpuDevicesTest, TheSlotsNodesAndTheControlNodes) {
  for (const char* n : {"nvidia0", "nvidia1", "nvidia2", "nvidiactl",
                        "nvidia-uvm", "nvidia-uvm-tools"}) {
    Touch(roots_.dev + "/" + n);
  }
  EXPECT_THAT(ContainerGpuDevices("1,2", roots_),
              ElementsAre(roots_.dev + "/nvidia1", roots_.dev + "/nvidia2",
                          roots_.dev + "/nvidiactl", roots_.dev + "/nvidia-uvm",
                          roots_.dev + "/nvidia-uvm-tools"));
  EXPECT_TRUE(ContainerGpuDevices("", roots_).empty());
}

TEST_F(GpuDevicesTest, DriverLibrariesComeFromTheHostReadOnly) {
  EXPECT_TRUE(ContainerGpuDriverMounts(roots_).empty());
  Touch(roots_.lib_dirs[0] + "/libcuda.so.1");
  Touch(roots_.bin_dir + "/nvidia-smi");
  std::vector<ContainerMount> mounts = ContainerGpuDriverMounts(roots_);
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].host_path, roots_.lib_dirs[0] + "/libcuda.so.1");
  EXPECT_EQ(mounts[0].container_path, mounts[0].host_path);
  EXPECT_TRUE(mounts[0].read_only);
  EXPECT_EQ(mounts[1].container_path, roots_.bin_dir + "/nvidia-smi");
}

TEST_F(GpuDevicesTest, NoNodesMeansNoDevicesAndCdiWinsWhenThere) {
  EXPECT_TRUE(ContainerGpuDevices("0", roots_).empty());
  Touch(roots_.cdi[0] + "/nvidia.yaml");
  std::ofstream(roots_.cdi[0] + "/nvidia.yaml") << "kind: nvidia.com/gpu\n";
  EXPECT_THAT(ContainerGpuDevices("0,3", roots_),
              ElementsAre("nvidia.com/gpu=0", "nvidia.com/gpu=3"));
}

// The helper both the local executor and a Slurm task use: devices, the
// driver mounts only with device nodes, and `false` with nothing to give.
TEST_F(GpuDevicesTest, AddContainerGpusGivesTheJobItsGpus) {
  ContainerJob job;
  job.devices = {"/dev/fuse"};
  EXPECT_TRUE(AddContainerGpus("", job, roots_));
  EXPECT_FALSE(AddContainerGpus("0", job, roots_));
  EXPECT_THAT(job.devices, ElementsAre("/dev/fuse"));
  EXPECT_TRUE(job.mounts.empty());

  Touch(roots_.dev + "/nvidia0");
  Touch(roots_.lib_dirs[0] + "/libcuda.so.1");
  EXPECT_TRUE(AddContainerGpus("0", job, roots_));
  EXPECT_THAT(job.devices, ElementsAre("/dev/fuse", roots_.dev + "/nvidia0"));
  ASSERT_EQ(job.mounts.size(), 1u);
  EXPECT_EQ(job.mounts[0].host_path, roots_.lib_dirs[0] + "/libcuda.so.1");

  ContainerJob cdi_job;
  std::ofstream(roots_.cdi[0] + "/nvidia.yaml") << "kind: nvidia.com/gpu\n";
  EXPECT_TRUE(AddContainerGpus("0", cdi_job, roots_));
  EXPECT_THAT(cdi_job.devices, ElementsAre("nvidia.com/gpu=0"));
  EXPECT_TRUE(cdi_job.mounts.empty()) << "CDI mounts the driver itself";
}

TEST(ContainerCommandTest, CpusClampedToTheMachineAndPullPolicy) {
  JobSpec spec = Spec();
  spec.container->cpus = 4;
  ContainerOptions options = Options();
  options.host_cpus = 2;
  options.pull = "missing";
  absl::StatusOr<std::vector<std::string>> argv =
      PodmanRunArgv(options, Nobody(), spec, "N", "/e");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, Contains("--cpus=2"));
  EXPECT_THAT(*argv, Contains("--pull=missing"));
}

}  // namespace
}  // namespace cairn::jobs
