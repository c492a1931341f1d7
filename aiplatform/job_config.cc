// Job config files -> cairn.v1.Job via the protobuf JSON mapping.
#include "aiplatform/job_config.h"

#include <regex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "util/bounded_file.h"
#include "util/yaml/yaml_json.h"

namespace cairn::aiplatform {
namespace {

using nlohmann::json;

// "training_input.foo_bar" -> "trainingInput.fooBar": paths as users
// write them.
std::string LowerCamel(const std::string& path) {
  std::string out;
  bool upper = false;
  for (char c : path) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? absl::ascii_toupper(c) : c;
    upper = false;
  }
  return out;
}

// protobuf says "trainingInput.foo: Cannot find field." (3.21, with the
// path); say it the way a user reads it.
std::string Explain(const std::string& message) {
  static const std::regex kUnknown(
      R"(^(?:\(([^)]*)\) )?(.+): Cannot find field\.?$)");
  std::smatch m;
  if (std::regex_match(message, m, kUnknown)) {
    std::string field = m[2].str();
    if (m[1].matched && !m[1].str().empty()) field = m[1].str() + "." + field;
    // The path is in proto names, the unknown last part as written.
    const size_t dot = field.rfind('.');
    if (dot != std::string::npos) {
      field = LowerCamel(field.substr(0, dot)) + field.substr(dot);
    }
    return absl::StrCat("unknown field \"", field, "\"");
  }
  // "(training_input.scale_tier): invalid value "HUGE" for type ..." ->
  // "trainingInput.scaleTier: invalid value "HUGE"".
  static const std::regex kAtPath(R"(^\(([^)]+)\): (.*?)(?: for type \S+)?$)");
  if (std::regex_match(message, m, kAtPath)) {
    return absl::StrCat(LowerCamel(m[1].str()), ": ", m[2].str());
  }
  return message;
}

void ClearOutputOnly(cairn::v1::Job& job) {
  job.clear_create_time();
  job.clear_start_time();
  job.clear_end_time();
  job.clear_state();
  job.clear_error_message();
  job.clear_training_output();
  job.clear_etag();
}

}  // namespace

absl::StatusOr<JobConfig> ParseJobConfig(const std::string& text) {
  // Every scalar a JSON string: protobuf's JSON parser reads numbers and
  // booleans from strings too, so a value parses by its field's type
  // (categoricalValues: [1, 2] stays text, maxTrials: 10 a number).
  util::yaml::YamlJsonOptions yaml;
  yaml.scalars_as_strings = true;
  yaml.drop_null_values = true;
  absl::StatusOr<json> j = util::yaml::YamlToJson(text, yaml);
  if (!j.ok()) return j.status();
  if (!j->is_object()) {
    return absl::InvalidArgumentError(
        "the config must be a mapping with trainingInput (and labels, jobId)");
  }
  std::string json_text;
  try {
    json_text = j->dump();
  } catch (const json::exception&) {
    return absl::InvalidArgumentError("the config is not valid UTF-8");
  }
  JobConfig config;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  options.case_insensitive_enum_parsing = true;
  const auto status = google::protobuf::util::JsonStringToMessage(
      json_text, &config.job, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        Explain(std::string(status.message()).substr(0, 512)));
  }
  ClearOutputOnly(config.job);
  config.ignored_fields = IgnoredFields(config.job.training_input());
  return config;
}

absl::StatusOr<JobConfig> LoadJobConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      util::ReadFileAtMost(path, util::yaml::kMaxConfigFileBytes);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat("the job config file: ", text.status().message()));
  }
  absl::StatusOr<JobConfig> config = ParseJobConfig(*text);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  return config;
}

std::vector<std::string> IgnoredFields(const cairn::v1::TrainingInput& in) {
  std::vector<std::string> out;
  auto add = [&out](bool set, const char* name) {
    if (set) out.push_back(absl::StrCat("trainingInput.", name));
  };
  add(!in.region().empty(), "region");
  add(!in.runtime_version().empty(), "runtimeVersion");
  add(!in.python_version().empty(), "pythonVersion");
  // Machine types give a custom container its limits (machine_types.h).
  const bool image = !in.master_config().image_uri().empty();
  add(!image && !in.master_type().empty(), "masterType");
  add(!image && !in.worker_type().empty(), "workerType");
  add(!image && !in.parameter_server_type().empty(), "parameterServerType");
  add(!image && !in.evaluator_type().empty(), "evaluatorType");
  add(in.package_uris_size() > 0, "packageUris");
  add(!in.service_account().empty(), "serviceAccount");
  add(!in.network().empty(), "network");
  add(in.has_encryption_config(), "encryptionConfig");
  add(in.enable_web_access(), "enableWebAccess");
  add(in.scheduling().priority() != 0, "scheduling.priority");
  for (const auto& [name, config] :
       {std::pair{"masterConfig", &in.master_config()},
        std::pair{"workerConfig", &in.worker_config()},
        std::pair{"parameterServerConfig", &in.parameter_server_config()},
        std::pair{"evaluatorConfig", &in.evaluator_config()}}) {
    add(!config->accelerator_config().type().empty(),
        absl::StrCat(name, ".acceleratorConfig.type").c_str());
    add(config->has_disk_config(), absl::StrCat(name, ".diskConfig").c_str());
  }
  return out;
}

std::string TrainingInputJson(const cairn::v1::TrainingInput& input) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  if (!google::protobuf::util::MessageToJsonString(input, &out, options).ok() ||
      out.empty()) {
    return "{}";
  }
  return out;
}

}  // namespace cairn::aiplatform
