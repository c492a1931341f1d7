// See training_job_request.h.
#include "sagemaker/training_job_request.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "sagemaker/instance_types.h"
#include "sagemaker/metric_definitions.h"
#include "sagemaker/object_root.h"
#include "sagemaker/tags.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::SageMakerChannel;
using cairn::v1::SageMakerCreateTrainingJobRequest;

absl::Status CheckLength(absl::string_view field, absl::string_view value,
                         size_t min, size_t max) {
  if (value.size() < min || value.size() > max) {
    return InvalidField(field, value,
                        absl::StrCat("must be ", min, " to ", max, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckOneOf(absl::string_view field, absl::string_view value,
                        std::initializer_list<absl::string_view> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
    return absl::OkStatus();
  }
  std::string list;
  for (absl::string_view a : allowed) absl::StrAppend(&list, " ", a);
  return InvalidField(field, value, absl::StrCat("Cairn supports only:", list));
}

// A channel is a directory name under /opt/ml/input/data: never "." or "..".
bool IsChannelName(absl::string_view name) {
  if (name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
  });
}

bool IsEnvName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

absl::Status ValidateAlgorithm(const SageMakerCreateTrainingJobRequest& r) {
  const auto& algo = r.algorithm_specification();
  absl::Status s = CheckLength("AlgorithmSpecification.TrainingImage",
                               algo.training_image(), 1, 255);
  if (s.ok() && absl::StrContains(algo.training_image(), ' ')) {
    s = InvalidField("AlgorithmSpecification.TrainingImage",
                     algo.training_image(), "holds a space");
  }
  if (s.ok()) {
    s = CheckOneOf("AlgorithmSpecification.TrainingInputMode",
                   algo.training_input_mode(), {"File", "FastFile"});
  }
  if (s.ok() && algo.metric_definitions_size() > 40) {
    s = InvalidField("AlgorithmSpecification.MetricDefinitions", "",
                     "at most 40 metrics");
  }
  for (const auto& metric : algo.metric_definitions()) {
    if (!s.ok()) break;
    s = CheckLength("MetricDefinitions.Name", metric.name(), 1, 255);
    if (s.ok()) {
      s = CheckLength("MetricDefinitions.Regex", metric.regex(), 1, 500);
    }
    if (s.ok()) s = CompileMetricRegex(metric.regex()).status();
  }
  return s;
}

absl::Status ValidateChannel(const SageMakerChannel& c) {
  absl::Status s =
      CheckLength("InputDataConfig.ChannelName", c.channel_name(), 1, 64);
  if (s.ok() && !IsChannelName(c.channel_name())) {
    s = InvalidField("InputDataConfig.ChannelName", c.channel_name(),
                     "must be [A-Za-z0-9.-_], not '.' or '..'");
  }
  const auto& src = c.data_source();
  if (s.ok() && src.has_s3_data_source() == src.has_file_system_data_source()) {
    s = InvalidField(
        "InputDataConfig.DataSource", c.channel_name(),
        "give exactly one of S3DataSource and FileSystemDataSource");
  }
  if (s.ok() && src.has_s3_data_source()) {
    const auto& s3 = src.s3_data_source();
    s = CheckOneOf("S3DataSource.S3DataType", s3.s3_data_type(),
                   {"S3Prefix", "ManifestFile"});
    if (s.ok() && !s3.s3_data_distribution_type().empty()) {
      s = CheckOneOf("S3DataSource.S3DataDistributionType",
                     s3.s3_data_distribution_type(), {"FullyReplicated"});
    }
    if (s.ok()) s = ParseS3Uri("S3DataSource.S3Uri", s3.s3_uri()).status();
  }
  if (s.ok() && src.has_file_system_data_source()) {
    const auto& fsd = src.file_system_data_source();
    if (!absl::StartsWith(fsd.directory_path(), "/") ||
        absl::StrContains(fsd.directory_path(), "..")) {
      s = InvalidField("FileSystemDataSource.DirectoryPath",
                       fsd.directory_path(), "must be absolute, without '..'");
    }
  }
  if (s.ok() && !c.compression_type().empty()) {
    s = CheckOneOf("InputDataConfig.CompressionType", c.compression_type(),
                   {"None"});
  }
  return s;
}

absl::Status ValidateChannels(const SageMakerCreateTrainingJobRequest& r) {
  if (r.input_data_config_size() > 20) {
    return InvalidField("InputDataConfig", "", "at most 20 channels");
  }
  std::set<std::string> names;
  for (const SageMakerChannel& c : r.input_data_config()) {
    if (absl::Status s = ValidateChannel(c); !s.ok()) return s;
    if (!names.insert(c.channel_name()).second) {
      return InvalidField("InputDataConfig.ChannelName", c.channel_name(),
                          "is given twice");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMaps(const SageMakerCreateTrainingJobRequest& r) {
  if (r.hyper_parameters_size() > 100) {
    return InvalidField("HyperParameters", "", "at most 100 entries");
  }
  for (const auto& [k, v] : r.hyper_parameters()) {
    absl::Status s = CheckLength("HyperParameters key", k, 1, 256);
    if (s.ok())
      s = CheckLength(absl::StrCat("HyperParameters.", k), v, 0, 2500);
    if (!s.ok()) return s;
  }
  if (r.environment_size() > 48) {
    return InvalidField("Environment", "", "at most 48 entries");
  }
  for (const auto& [k, v] : r.environment()) {
    if (!IsEnvName(k) || k.size() > 512) {
      return InvalidField("Environment key", k,
                          "must be [A-Za-z_][A-Za-z0-9_]*");
    }
    if (absl::Status s =
            CheckLength(absl::StrCat("Environment.", k), v, 0, 512);
        !s.ok()) {
      return s;
    }
  }
  return ValidateTags("Tags", {r.tags().begin(), r.tags().end()});
}

absl::Status ValidateResources(const SageMakerCreateTrainingJobRequest& r) {
  absl::Status s =
      LookUpInstanceType(r.resource_config().instance_type()).status();
  const int count = r.resource_config().instance_count();
  if (s.ok() && (count < 1 || count > kMaxInstanceCount)) {
    s = InvalidField("ResourceConfig.InstanceCount", absl::StrCat(count),
                     absl::StrCat("must be 1 to ", kMaxInstanceCount));
  }
  const int runtime = r.stopping_condition().max_runtime_in_seconds();
  if (s.ok() && (runtime < 1 || runtime > kMaxRuntimeSeconds)) {
    s = InvalidField("StoppingCondition.MaxRuntimeInSeconds",
                     absl::StrCat(runtime),
                     absl::StrCat("must be 1 to ", kMaxRuntimeSeconds));
  }
  if (s.ok()) {
    s = ParseS3Uri("OutputDataConfig.S3OutputPath",
                   r.output_data_config().s3_output_path())
            .status();
  }
  if (s.ok() && r.has_checkpoint_config()) {
    s = ParseS3Uri("CheckpointConfig.S3Uri", r.checkpoint_config().s3_uri())
            .status();
    const std::string& local = r.checkpoint_config().local_path();
    if (s.ok() && (!absl::StartsWith(local, "/opt/ml/") ||
                   absl::StrContains(local, ".."))) {
      s = InvalidField("CheckpointConfig.LocalPath", local,
                       "must lie under /opt/ml/, without '..'");
    }
  }
  return s;
}

absl::Status Unsupported(absl::string_view field, absl::string_view value,
                         absl::string_view why) {
  return InvalidField(field, value,
                      absl::StrCat("is not supported by Cairn (", why, ")"));
}

// Members the request may carry whose values ask for what Cairn does not
// do: refused by name rather than ignored.
absl::Status ValidateSupported(const SageMakerCreateTrainingJobRequest& r) {
  if (!r.output_data_config().kms_key_id().empty()) {
    return Unsupported("OutputDataConfig.KmsKeyId",
                       r.output_data_config().kms_key_id(),
                       "outputs are not encrypted with KMS");
  }
  if (r.stopping_condition().max_wait_time_in_seconds() != 0) {
    return Unsupported(
        "StoppingCondition.MaxWaitTimeInSeconds",
        absl::StrCat(r.stopping_condition().max_wait_time_in_seconds()),
        "no spot training");
  }
  if (r.enable_managed_spot_training()) {
    return Unsupported("EnableManagedSpotTraining", "true", "no spot training");
  }
  if (r.enable_network_isolation()) {
    return Unsupported("EnableNetworkIsolation", "true",
                       "containers share the host's network");
  }
  if (r.algorithm_specification().enable_sage_maker_metrics_time_series()) {
    return Unsupported(
        "AlgorithmSpecification.EnableSageMakerMetricsTimeSeries", "true",
        "metrics are Cairn measurements");
  }
  for (const SageMakerChannel& c : r.input_data_config()) {
    const auto& fsd = c.data_source().file_system_data_source();
    if (c.data_source().has_file_system_data_source() &&
        fsd.file_system_access_mode() != "ro") {
      return Unsupported("FileSystemDataSource.FileSystemAccessMode",
                         fsd.file_system_access_mode(),
                         "channels are mounted read-only: give ro");
    }
    if (!c.input_mode().empty()) {
      absl::Status s = CheckOneOf("InputDataConfig.InputMode", c.input_mode(),
                                  {"File", "FastFile"});
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

void FillDefaults(SageMakerCreateTrainingJobRequest* r) {
  auto* algo = r->mutable_algorithm_specification();
  if (algo->training_input_mode().empty())
    algo->set_training_input_mode("File");
  auto* res = r->mutable_resource_config();
  if (!res->has_instance_count()) res->set_instance_count(1);
  auto* stop = r->mutable_stopping_condition();
  if (!stop->has_max_runtime_in_seconds()) {
    stop->set_max_runtime_in_seconds(kDefaultRuntimeSeconds);
  }
  if (r->has_checkpoint_config() &&
      r->checkpoint_config().local_path().empty()) {
    r->mutable_checkpoint_config()->set_local_path(kDefaultCheckpointPath);
  }
}

}  // namespace

absl::Status InvalidField(absl::string_view field, absl::string_view value,
                          absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " '", absl::CHexEscape(value.substr(0, 100)),
                   value.size() > 100 ? "...'" : "'", ": ", why));
}

absl::Status ValidateJobName(absl::string_view field, absl::string_view name,
                             size_t max_length) {
  const bool ok =
      !name.empty() && name.size() <= max_length &&
      absl::ascii_isalnum(name.front()) && absl::ascii_isalnum(name.back()) &&
      std::all_of(name.begin(), name.end(),
                  [](char c) { return absl::ascii_isalnum(c) || c == '-'; });
  if (ok) return absl::OkStatus();
  return InvalidField(
      field, name,
      absl::StrCat("must be 1 to ", max_length,
                   " of [A-Za-z0-9-], starting and ending with a letter or "
                   "digit"));
}

absl::Status ValidateCreateTrainingJob(
    const SageMakerCreateTrainingJobRequest& r) {
  absl::Status s = ValidateJobName("TrainingJobName", r.training_job_name());
  if (s.ok()) s = CheckLength("RoleArn", r.role_arn(), 20, 2048);
  if (s.ok()) s = ValidateAlgorithm(r);
  if (s.ok()) s = ValidateChannels(r);
  if (s.ok()) s = ValidateResources(r);
  if (s.ok()) s = ValidateMaps(r);
  if (s.ok()) s = ValidateSupported(r);
  if (s.ok() && r.resource_config().volume_size_in_gb() < 1) {
    s = InvalidField("ResourceConfig.VolumeSizeInGB",
                     absl::StrCat(r.resource_config().volume_size_in_gb()),
                     "must be at least 1");
  }
  return s;
}

absl::StatusOr<SageMakerCreateTrainingJobRequest> ParseCreateTrainingJob(
    absl::string_view body) {
  SageMakerCreateTrainingJobRequest r;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed = google::protobuf::util::JsonStringToMessage(std::string(body),
                                                            &r, options);
  if (!parsed.ok()) {
    std::string message(parsed.message());
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    return absl::InvalidArgumentError(
        absl::StrCat("request body: ", message,
                     " (members Cairn does not run are refused)"));
  }
  FillDefaults(&r);
  if (absl::Status s = ValidateCreateTrainingJob(r); !s.ok()) return s;
  return r;
}

}  // namespace cairn::sagemaker
