// AI Platform custom containers as a job's study (MakeJobStudy): imageUri,
// containerCommand/containerArgs/args, the master's image as every group's
// default, machine types as limits, and the refusals AI Platform states.
#include "aiplatform/job_container.h"

#include <string>

#include "aiplatform/job_config.h"
#include "aiplatform/job_study.h"
#include "aiplatform/machine_types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A job from config text (YAML, as `cairn jobs submit training --config`).
Job Config(const std::string& yaml) {
  absl::StatusOr<JobConfig> config = ParseJobConfig(yaml);
  EXPECT_TRUE(config.ok()) << config.status();
  Job job = config.ok() ? config->job : Job();
  job.set_job_id("j1");
  return job;
}

absl::StatusOr<cairn::v1::TrialJobTemplate> Template(const Job& job) {
  absl::StatusOr<cairn::v1::Study> study = MakeJobStudy(job, {"/stage"});
  if (!study.ok()) return study.status();
  return study->spec().job_template();
}

TEST(MachineTypesTest, ComputeEngineTypesAndLegacyTiers) {
  EXPECT_EQ(MachineTypeLimits("n1-standard-4").cpus, 4);
  EXPECT_EQ(MachineTypeLimits("n1-standard-4").memory_bytes,
            int64_t{15} << 30);  // 3.75 GB x 4
  EXPECT_EQ(MachineTypeLimits("n1-highmem-2").memory_bytes, int64_t{13} << 30);
  EXPECT_EQ(MachineTypeLimits("n1-highcpu-16").cpus, 16);
  EXPECT_NEAR(MachineTypeLimits("n1-highcpu-16").memory_bytes, 14.4 * (1 << 30),
              1);
  EXPECT_EQ(MachineTypeLimits("complex_model_m").cpus, 0);
  EXPECT_EQ(MachineTypeLimits("standard").memory_bytes, 0);
  EXPECT_EQ(MachineTypeLimits("n1-standard-x").cpus, 0);
}

TEST(JobContainerTest, ImageWithEntrypointArgsAndLimits) {
  absl::StatusOr<cairn::v1::TrialJobTemplate> t = Template(Config(R"(
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-4
  masterConfig:
    imageUri: localhost/trainer:1
    containerCommand: [python, -m, trainer.task]
  args: [--epochs=2]
)"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->command().empty());
  EXPECT_EQ(t->container().image(), "localhost/trainer:1");
  EXPECT_THAT(t->container().command(),
              ElementsAre("python", "-m", "trainer.task"));
  EXPECT_THAT(t->container().args(), ElementsAre("--epochs=2"));
  EXPECT_EQ(t->container().cpus(), 4);
  EXPECT_EQ(t->container().memory_bytes(), int64_t{15} << 30);
  EXPECT_TRUE(t->env().empty());  // No staged package.
}

TEST(JobContainerTest, WorkersDefaultToTheMastersImage) {
  absl::StatusOr<cairn::v1::TrialJobTemplate> t = Template(Config(R"(
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-4
  masterConfig: {imageUri: localhost/a:1, containerArgs: [--x]}
  workerType: n1-highcpu-2
  workerCount: 2
  parameterServerType: standard
  parameterServerCount: 1
  parameterServerConfig: {imageUri: localhost/ps:1}
)"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->replicas_size(), 3);
  EXPECT_THAT(t->container().args(), ElementsAre("--x"));
  const cairn::v1::ReplicaGroup& workers = t->replicas(1);
  EXPECT_EQ(workers.container().image(), "");  // The master's.
  EXPECT_EQ(workers.container().cpus(), 2);
  const cairn::v1::ReplicaGroup& ps = t->replicas(2);
  EXPECT_EQ(ps.container().image(), "localhost/ps:1");
  EXPECT_EQ(ps.container().memory_bytes(), 0);  // A legacy tier.
}

TEST(JobContainerTest, RefusesWhatAiPlatformRefuses) {
  const auto message = [](const std::string& yaml) {
    absl::StatusOr<cairn::v1::TrialJobTemplate> t = Template(Config(yaml));
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(t.status().message());
  };
  EXPECT_THAT(message(R"(
trainingInput:
  masterConfig: {imageUri: localhost/a:1, containerArgs: [--y]}
  args: [--x]
)"),
              HasSubstr("trainingInput.args"));
  EXPECT_THAT(message(R"(
trainingInput:
  masterConfig: {imageUri: localhost/a:1}
  packageUris: [/tmp/p.tar.gz]
  pythonModule: m
)"),
              HasSubstr("trainingInput.packageUris"));
  EXPECT_THAT(message(R"(
trainingInput:
  pythonModule: m
  workerConfig: {imageUri: localhost/w:1}
)"),
              HasSubstr("trainingInput.workerConfig.imageUri"));
  EXPECT_THAT(message("trainingInput: {region: us-central1}\n"),
              HasSubstr("pythonModule"));
}

TEST(JobContainerTest, RegionAndPythonVersionAreRecordedAndIgnored) {
  absl::StatusOr<JobConfig> config = ParseJobConfig(R"(
trainingInput:
  masterType: n1-standard-4
  masterConfig: {imageUri: localhost/a:1}
  region: us-central1
  pythonVersion: "3.7"
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(
      config->ignored_fields,
      ElementsAre("trainingInput.region", "trainingInput.pythonVersion"));
}

}  // namespace
}  // namespace cairn::aiplatform
