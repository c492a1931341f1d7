// CreateTrainingJob bodies as boto3 sends them: the FACTS.md capture
// parses with its defaults filled, and each constraint refuses a bad value
// naming the field and value in under 1 KB.
#include "sagemaker/training_job_request.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "sagemaker/aws_error.h"

namespace cairn::sagemaker {
namespace {

// The FACTS.md 1.1 capture, with a bucket for every URI, the EFS channel
// as a local directory and no spot training (refused: Cairn has none).
constexpr char kBody[] = R"json({"TrainingJobName": "xgb-2024-01-01",
 "AlgorithmSpecification": {"TrainingImage": "localhost/my-train:latest",
   "TrainingInputMode": "File",
   "MetricDefinitions": [{"Name": "validation:loss", "Regex": "val_loss=([0-9\\.]+)"}]},
 "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
 "InputDataConfig": [
   {"ChannelName": "train", "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix",
     "S3Uri": "s3://my-bucket/data/train/", "S3DataDistributionType": "FullyReplicated"}},
    "ContentType": "text/csv", "CompressionType": "None"},
   {"ChannelName": "validation", "DataSource": {"FileSystemDataSource": {
     "FileSystemId": "fs-0123456789abcdef0", "FileSystemAccessMode": "ro",
     "FileSystemType": "EFS", "DirectoryPath": "/data/validation"}}}],
 "OutputDataConfig": {"S3OutputPath": "s3://my-bucket/output"},
 "ResourceConfig": {"InstanceType": "ml.p3.2xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
 "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
 "HyperParameters": {"epochs": "10", "optimizer": "\"adam\""},
 "Tags": [{"Key": "team", "Value": "ml"}],
 "CheckpointConfig": {"S3Uri": "s3://my-bucket/checkpoints/xgb"},
 "EnableManagedSpotTraining": false})json";

std::string With(absl::string_view from, absl::string_view to) {
  std::string body = absl::StrReplaceAll(kBody, {{from, to}});
  EXPECT_NE(body, kBody) << from;
  return body;
}

TEST(TrainingJobRequestTest, BotoBodyParses) {
  auto r = ParseCreateTrainingJob(kBody);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->training_job_name(), "xgb-2024-01-01");
  EXPECT_EQ(r->input_data_config(1)
                .data_source()
                .file_system_data_source()
                .directory_path(),
            "/data/validation");
  EXPECT_EQ(r->resource_config().instance_count(), 2);
  EXPECT_EQ(r->hyper_parameters().at("optimizer"), "\"adam\"");
  EXPECT_EQ(r->checkpoint_config().local_path(), "/opt/ml/checkpoints");
  EXPECT_EQ(r->algorithm_specification().metric_definitions(0).regex(),
            "val_loss=([0-9\\.]+)");
}

TEST(TrainingJobRequestTest, ManifestFileChannelParses) {
  auto r = ParseCreateTrainingJob(
      With(R"("S3DataType": "S3Prefix")", R"("S3DataType": "ManifestFile")"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(
      r->input_data_config(0).data_source().s3_data_source().s3_data_type(),
      "ManifestFile");
}

TEST(TrainingJobRequestTest, DefaultsAreFilled) {
  auto r = ParseCreateTrainingJob(
      With(R"("StoppingCondition": {"MaxRuntimeInSeconds": 3600},)", ""));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stopping_condition().max_runtime_in_seconds(), 86400);
}

TEST(TrainingJobRequestTest, EachConstraintNamesFieldAndValue) {
  struct Case {
    std::string body;
    const char* says;
  } cases[] = {
      {With("xgb-2024-01-01", "bad_name_!"), "TrainingJobName 'bad_name_!'"},
      {With("xgb-2024-01-01", std::string(64, 'a')), "TrainingJobName"},
      {With("xgb-2024-01-01", "-lead"), "TrainingJobName '-lead'"},
      {With("ml.p3.2xlarge", "local_gpu"),
       "ResourceConfig.InstanceType 'local_gpu'"},
      {With(R"("TrainingInputMode": "File")", R"("TrainingInputMode": "Pipe")"),
       "TrainingInputMode 'Pipe'"},
      {With(R"("InstanceCount": 2)", R"("InstanceCount": 0)"),
       "InstanceCount '0'"},
      {With("3600}", "99999999}"), "MaxRuntimeInSeconds '99999999'"},
      {With("s3://my-bucket/output", "s3://my-bucket/../etc"),
       "S3OutputPath 's3://my-bucket/../etc'"},
      {With("s3://my-bucket/data/train/", "/etc/passwd"),
       "S3DataSource.S3Uri '/etc/passwd'"},
      {With("val_loss=([0-9\\\\.]+)", "val_loss=[0-9]+"),
       "needs a capture group"},
      {With("val_loss=([0-9\\\\.]+)", "val_loss=(["), "does not compile"},
      {With(R"("ChannelName": "validation")", R"("ChannelName": "train")"),
       "ChannelName 'train': is given twice"},
      {With("/data/validation", "data/../x"), "DirectoryPath 'data/../x'"},
      {With(R"("EnableManagedSpotTraining": false)", R"("VpcConfig": {})"),
       "VpcConfig"},
      // Members whose values ask for what Cairn does not do.
      {With(R"("EnableManagedSpotTraining": false)",
            R"("EnableManagedSpotTraining": true)"),
       "EnableManagedSpotTraining 'true': is not supported by Cairn"},
      {With(R"("EnableManagedSpotTraining": false)",
            R"("EnableNetworkIsolation": true)"),
       "EnableNetworkIsolation 'true'"},
      {With(R"({"MaxRuntimeInSeconds": 3600})",
            R"({"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200})"),
       "StoppingCondition.MaxWaitTimeInSeconds '7200'"},
      {With(R"("S3OutputPath": "s3://my-bucket/output")",
            R"("S3OutputPath": "s3://my-bucket/output", "KmsKeyId": "k1")"),
       "OutputDataConfig.KmsKeyId 'k1'"},
      {With(R"("FileSystemAccessMode": "ro")",
            R"("FileSystemAccessMode": "rw")"),
       "FileSystemDataSource.FileSystemAccessMode 'rw'"},
      {With(R"("CompressionType": "None")",
            R"("CompressionType": "None", "InputMode": "Pipe")"),
       "InputDataConfig.InputMode 'Pipe'"},
      {With(R"("TrainingInputMode": "File",)",
            R"("TrainingInputMode": "File",
               "EnableSageMakerMetricsTimeSeries": true,)"),
       "EnableSageMakerMetricsTimeSeries 'true'"},
      {With(R"("VolumeSizeInGB": 50)", R"("VolumeSizeInGB": 0)"),
       "ResourceConfig.VolumeSizeInGB '0'"},
      {With(R"("Key": "team")", R"("Key": "")"), "Tags.Key ''"},
      {With(R"("S3DataType": "S3Prefix")",
            R"("S3DataType": "AugmentedManifestFile")"),
       "S3DataSource.S3DataType 'AugmentedManifestFile': Cairn supports "
       "only: S3Prefix ManifestFile"},
  };
  for (const Case& c : cases) {
    auto r = ParseCreateTrainingJob(c.body);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << r.status();
    EXPECT_LT(AwsErrorBody(AwsErrorOf(r.status())).size(), 1024u);
  }
}

TEST(TrainingJobRequestTest, HostileValuesStaySmall) {
  auto r = ParseCreateTrainingJob(
      With("xgb-2024-01-01", std::string(100000, 'x') + "\x01\xff"));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 400u);
  r = ParseCreateTrainingJob(std::string(50000, '['));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 500u);
}

}  // namespace
}  // namespace cairn::sagemaker
