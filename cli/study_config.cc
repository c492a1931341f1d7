// YAML/JSON study config -> cairn.v1.StudySpec via the protobuf JSON mapping.
#include "cli/study_config.h"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace cairn::cli {
namespace {

using nlohmann::json;

bool FullMatch(const std::string& s, const std::regex& re) {
  return std::regex_match(s, re);
}

// A plain (unquoted) YAML scalar under the YAML 1.2 core schema.
json PlainScalarToJson(const std::string& s) {
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(
      R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kNull("null|Null|NULL|~|");
  static const std::regex kInf(R"(\+?\.(inf|Inf|INF))");
  static const std::regex kNegInf(R"(-\.(inf|Inf|INF))");
  static const std::regex kNan(R"(\.(nan|NaN|NAN))");

  if (FullMatch(s, kInt)) {
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    const char* end = s.data() + s.size();
    int64_t i = 0;
    auto [p, ec] = std::from_chars(begin, end, i);
    if (ec == std::errc() && p == end) return json(i);
    uint64_t u = 0;
    auto [pu, ecu] = std::from_chars(begin, end, u);
    if (ecu == std::errc() && pu == end) return json(u);
    // Too large for 64 bits: fall through to a double.
  }
  if (FullMatch(s, kFloat)) {
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    const char* end = s.data() + s.size();
    double d = 0;
    auto [p, ec] = std::from_chars(begin, end, d);
    if (ec == std::errc() && p == end) return json(d);
    // Out of range (e.g. 1e999): let protobuf reject the spelled value.
    return json(s);
  }
  if (FullMatch(s, kTrue)) return json(true);
  if (FullMatch(s, kFalse)) return json(false);
  if (FullMatch(s, kNull)) return json(nullptr);
  if (FullMatch(s, kInf)) return json("Infinity");
  if (FullMatch(s, kNegInf)) return json("-Infinity");
  if (FullMatch(s, kNan)) return json("NaN");
  return json(s);
}

absl::StatusOr<json> Convert(const YAML::Node& node, const std::string& path) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return json(nullptr);
    case YAML::NodeType::Scalar:
      // yaml-cpp tags plain scalars "?" and quoted ones "!"; an explicit tag
      // such as !!str also keeps the value a string.
      if (node.Tag() == "?") return PlainScalarToJson(node.Scalar());
      return json(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      size_t i = 0;
      for (const YAML::Node& item : node) {
        auto v = Convert(item, absl::StrCat(path, "[", i, "]"));
        if (!v.ok()) return v.status();
        out.push_back(*std::move(v));
        ++i;
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        const std::string where = path.empty() ? "top level" : path;
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(
              absl::StrCat("map key at ", where, " is not a scalar"));
        }
        const std::string key = kv.first.Scalar();
        if (out.contains(key)) {
          return absl::InvalidArgumentError(
              absl::StrCat("duplicate key \"", key, "\" at ", where));
        }
        auto v = Convert(kv.second,
                         path.empty() ? key : absl::StrCat(path, ".", key));
        if (!v.ok()) return v.status();
        out[key] = *std::move(v);
      }
      return out;
    }
  }
  return absl::InternalError("unknown YAML node type");
}

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

}  // namespace

absl::StatusOr<nlohmann::json> YamlToJson(const YAML::Node& node) {
  return Convert(node, "");
}

absl::StatusOr<cairn::v1::StudySpec> StudySpecFromJson(
    const std::string& json_text) {
  cairn::v1::StudySpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status =
      google::protobuf::util::JsonStringToMessage(json_text, &spec, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        ExplainJsonError(std::string(status.message())));
  }
  return spec;
}

absl::StatusOr<cairn::v1::StudySpec> StudySpecFromYaml(
    const std::string& yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports 0-based lines and columns.
    return absl::InvalidArgumentError(
        absl::StrCat("YAML syntax error at line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  }
  if (root.IsNull() || !root.IsDefined()) {
    return absl::InvalidArgumentError("the study config is empty");
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        "the study config must be a mapping of StudySpec fields "
        "(parameters, metrics, algorithm, ...)");
  }
  auto j = YamlToJson(root);
  if (!j.ok()) return j.status();
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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the study config file"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::NotFoundError(absl::StrCat(path, ": read error"));
  }
  const std::string text = buffer.str();
  const bool is_json =
      path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  absl::StatusOr<cairn::v1::StudySpec> spec =
      is_json ? StudySpecFromJson(text) : StudySpecFromYaml(text);
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
