// The training-container contract as files: the config JSON a container
// reads, its environment, FailureReason, and model.tar.gz as GNU tar reads
// it back (a child process), with a planted symbolic link left out.
#include "sagemaker/container_files.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sagemaker/tar_gz.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

cairn::v1::SageMakerCreateTrainingJobRequest Request() {
  auto r = ParseCreateTrainingJob(R"json({"TrainingJobName": "job-1",
    "AlgorithmSpecification": {"TrainingImage": "localhost/t:1"},
    "RoleArn": "arn:aws:iam::123456789012:role/R",
    "InputDataConfig": [
      {"ChannelName": "train", "ContentType": "text/csv", "DataSource":
        {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bkt/train/"}}},
      {"ChannelName": "test", "DataSource":
        {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bkt/test/"}}}],
    "OutputDataConfig": {"S3OutputPath": "s3://bkt/out"},
    "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 3,
                       "VolumeSizeInGB": 1},
    "HyperParameters": {"lr": "0.1", "epochs": "3"},
    "Environment": {"MODE": "fast", "TRAINING_JOB_NAME": "spoofed"}})json");
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path FreshDir(const char* name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ContainerFilesTest, ConfigFiles) {
  const fs::path dir = FreshDir("container_files_config");
  ASSERT_TRUE(PrepareHostDir(dir.string(), Request(), 1).ok());
  auto hps =
      nlohmann::json::parse(Slurp(dir / "input/config/hyperparameters.json"));
  EXPECT_EQ(hps, nlohmann::json({{"epochs", "3"}, {"lr", "0.1"}}));
  auto rc =
      nlohmann::json::parse(Slurp(dir / "input/config/resourceconfig.json"));
  EXPECT_EQ(rc["current_host"], "algo-2");
  EXPECT_EQ(rc["hosts"], nlohmann::json({"algo-1", "algo-2", "algo-3"}));
  auto idc =
      nlohmann::json::parse(Slurp(dir / "input/config/inputdataconfig.json"));
  EXPECT_EQ(idc["train"]["ContentType"], "text/csv");
  EXPECT_EQ(idc["train"]["TrainingInputMode"], "File");
  EXPECT_FALSE(idc["test"].contains("ContentType"));
  for (const char* sub :
       {"model", "output/data", "input/data", "checkpoints"}) {
    EXPECT_TRUE(fs::is_directory(dir / sub)) << sub;
  }
}

TEST(ContainerFilesTest, EnvironmentNamesTheJob) {
  auto env = ContainerEnvironment(Request());
  EXPECT_EQ(env["MODE"], "fast");
  EXPECT_EQ(env["TRAINING_JOB_NAME"], "job-1");
  EXPECT_EQ(env["TRAINING_JOB_ARN"],
            "arn:aws:sagemaker:local:000000000000:training-job/job-1");
}

TEST(ContainerFilesTest, FailureReasonIsCutAndNeverFollowsLinks) {
  const fs::path dir = FreshDir("container_files_failure");
  fs::create_directories(dir / "output");
  EXPECT_EQ(ReadFailureReason(dir.string()), "");
  std::ofstream(dir / "output/failure") << std::string(3000, 'e');
  EXPECT_EQ(ReadFailureReason(dir.string()), std::string(1024, 'e'));
  fs::remove(dir / "output/failure");
  std::ofstream(dir / "secret") << "do not read";
  fs::create_symlink(dir / "secret", dir / "output/failure");
  EXPECT_EQ(ReadFailureReason(dir.string()), "");
}

TEST(TarGzTest, GnuTarReadsItBack) {
  const fs::path dir = FreshDir("tar_gz_src");
  fs::create_directories(dir / "model/sub");
  std::ofstream(dir / "model/weights.bin") << std::string(70000, 'w');
  std::ofstream(dir / "model/sub/config.json") << "{\"a\": 1}";
  const std::string deep(120, 'd');
  fs::create_directories(dir / "model" / deep);
  std::ofstream(dir / "model" / deep / "x.txt") << "deep";
  std::ofstream(dir / "outside") << "secret";
  fs::create_symlink(dir / "outside", dir / "model/link");
  const fs::path archive = dir / "model.tar.gz";
  ASSERT_TRUE(PackTarGz((dir / "model").string(), archive.string()).ok());
  const fs::path out = FreshDir("tar_gz_out");
  const std::string cmd =
      "tar -xzf '" + archive.string() + "' -C '" + out.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(Slurp(out / "weights.bin"), std::string(70000, 'w'));
  EXPECT_EQ(Slurp(out / "sub/config.json"), "{\"a\": 1}");
  EXPECT_EQ(Slurp(out / deep / "x.txt"), "deep");
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "link")));
  EXPECT_FALSE(fs::exists(dir / "model.tar.gz.tmp"));
}

TEST(TarGzTest, MissingSourceNamesIt) {
  absl::Status s = PackTarGz("/nonexistent/model", "/tmp/x.tar.gz");
  EXPECT_NE(s.message().find("/nonexistent/model"), std::string::npos);
}

}  // namespace
}  // namespace cairn::sagemaker
