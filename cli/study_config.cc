// YAML/JSON study config -> cairn.v1.StudySpec via the protobuf JSON mapping.
#include "cli/study_config.h"

#include <filesystem>
#include <regex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "util/bounded_file.h"
#include "util/yaml/yaml_json.h"

namespace cairn::cli {
namespace {

// Rewrites protobuf's JSON parser messages into plainer English where the
// pattern is known; other messages pass through unchanged.
std::string ExplainJsonError(const std::string& message) {
  static const std::regex kUnknownField(
      R"(^(?:\(([^)]*)\) )?(.+): Cannot find field\.$)");
  static const std::regex kBadEnum(
      R"re(^(.*)invalid value "([^"]*)" for type type\.googleapis\.com/([A-Za-z0-9_.]+)$)re");
  std::smatch m;
  if (std::regex_match(message, m, kUnknownField)) {
    std::string out = absl::StrCat("unknown field \"", m[2].str(), "\"");
    if (m[1].matched && !m[1].str().empty()) {
      absl::StrAppend(&out, " in ", m[1].str());
    }
    return out;
  }
  if (std::regex_match(message, m, kBadEnum)) {
    const google::protobuf::EnumDescriptor* e =
        google::protobuf::DescriptorPool::generated_pool()->FindEnumTypeByName(
            m[3].str());
    if (e != nullptr) {
      std::vector<std::string> names;
      for (int i = 0; i < e->value_count(); ++i) {
        names.push_back(e->value(i)->name());
      }
      return absl::StrCat(m[1].str(), "invalid value \"", m[2].str(),
                          "\"; expected one of ", absl::StrJoin(names, ", "));
    }
  }
  return message;
}

// job_template.image (+ command, run inside the image) is shorthand for
// job_template.container {image, command}.
absl::Status ExpandImageShorthand(nlohmann::json& j) {
  if (!j.is_object() || !j.contains("job_template")) return absl::OkStatus();
  nlohmann::json& t = j["job_template"];
  if (!t.is_object() || !t.contains("image")) return absl::OkStatus();
  if (t.contains("container")) {
    return absl::InvalidArgumentError(
        "job_template.image: give image (with command) or container, not "
        "both");
  }
  t["container"] = nlohmann::json{{"image", t["image"]}};
  if (t.contains("command")) t["container"]["command"] = t["command"];
  t.erase("image");
  t.erase("command");
  return absl::OkStatus();
}

}  // namespace

absl::Status ResolveCommandPaths(const std::string& config_dir,
                                 cairn::v1::StudySpec& spec) {
  namespace fs = std::filesystem;
  if (!spec.has_job_template()) return absl::OkStatus();
  std::error_code ec;
  const fs::path dir = fs::absolute(config_dir.empty() ? "." : config_dir, ec);
  auto& command = *spec.mutable_job_template()->mutable_command();
  for (int i = 0; i < command.size(); ++i) {
    const std::string& arg = command[i];
    if (arg.empty() || arg[0] == '/' || arg[0] == '-') continue;
    const fs::path file = (dir / arg).lexically_normal();
    if (fs::is_regular_file(file, ec)) {
      command[i] = file.string();
    } else if (arg.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job_template.command[", i, "]: '", arg.substr(0, 200),
          "' is not a file relative to the study config's directory '",
          dir.lexically_normal().string().substr(0, 300),
          "' (a relative path in the command is resolved there; write it "
          "relative to the config file, or absolute)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<cairn::v1::StudySpec> StudySpecFromJson(
    const std::string& json_text) {
  cairn::v1::StudySpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (absl::Status s = ExpandImageShorthand(j); !s.ok()) return s;
  const std::string expanded = j.is_discarded() ? json_text : j.dump();
  const auto status =
      google::protobuf::util::JsonStringToMessage(expanded, &spec, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        ExplainJsonError(std::string(status.message())));
  }
  return spec;
}

absl::StatusOr<cairn::v1::StudySpec> StudySpecFromYaml(
    const std::string& yaml) {
  absl::StatusOr<nlohmann::json> j = util::yaml::YamlToJson(yaml);
  if (!j.ok()) return j.status();
  if (j->is_null()) {
    return absl::InvalidArgumentError("the study config is empty");
  }
  if (!j->is_object()) {
    return absl::InvalidArgumentError(
        "the study config must be a mapping of StudySpec fields "
        "(parameters, metrics, algorithm, ...)");
  }
  // dump() throws on strings that are not UTF-8 (yaml-cpp passes them on).
  std::string json_text;
  try {
    json_text = j->dump();
  } catch (const nlohmann::json::exception&) {
    return absl::InvalidArgumentError("the study config is not valid UTF-8");
  }
  return StudySpecFromJson(json_text);
}

absl::StatusOr<cairn::v1::StudySpec> LoadStudySpecFile(
    const std::string& path) {
  absl::StatusOr<std::string> read =
      util::ReadFileAtMost(path, util::yaml::kMaxConfigFileBytes);
  if (!read.ok()) {
    return absl::Status(
        read.status().code(),
        absl::StrCat("the study config file: ", read.status().message()));
  }
  const std::string text = *std::move(read);
  const bool is_json =
      path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  absl::StatusOr<cairn::v1::StudySpec> spec =
      is_json ? StudySpecFromJson(text) : StudySpecFromYaml(text);
  if (spec.ok()) {
    absl::Status s = ResolveCommandPaths(
        std::filesystem::path(path).parent_path().string(), *spec);
    if (!s.ok()) spec = s;
  }
  if (!spec.ok()) {
    return absl::Status(spec.status().code(),
                        absl::StrCat(path, ": ", spec.status().message()));
  }
  return spec;
}

std::string DisplayNameFromPath(const std::string& path) {
  std::string base = path;
  const size_t slash = base.find_last_of('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  return base;
}

}  // namespace cairn::cli
