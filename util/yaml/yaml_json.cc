// See yaml_json.h.
#include "util/yaml/yaml_json.h"

#include <charconv>
#include <regex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/quote.h"
#include "yaml-cpp/yaml.h"

namespace cairn::util::yaml {
namespace {

using nlohmann::json;

// Paths in errors are shortened to this, so every message stays under 1 KB.
constexpr size_t kMaxPathInError = 400;

bool FullMatch(const std::string& s, const std::regex& re) {
  return std::regex_match(s, re);
}

// Whether all of `s` (a leading '+' allowed) is a number of T, in *out.
template <typename T>
bool ParseWhole(const std::string& s, T* out) {
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && p == end;
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
    int64_t i = 0;
    if (ParseWhole(s, &i)) return json(i);
    uint64_t u = 0;
    if (ParseWhole(s, &u)) return json(u);
    // Too large for 64 bits: fall through to a double.
  }
  if (FullMatch(s, kFloat)) {
    double d = 0;
    if (ParseWhole(s, &d)) return json(d);
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

// One conversion, with what it has spent of the bounds.
class Converter {
 public:
  explicit Converter(const YamlJsonOptions& options) : options_(options) {}

  absl::StatusOr<json> Convert(const YAML::Node& node,
                               const std::string& path) {
    if (++nodes_ > options_.max_values) {
      return TooLarge(
          absl::StrCat("more than ", options_.max_values, " values"));
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return json(nullptr);
      case YAML::NodeType::Scalar:
        return Scalar(node);
      case YAML::NodeType::Sequence:
        return Sequence(node, path);
      case YAML::NodeType::Map:
        return Map(node, path);
    }
    return absl::InternalError("unknown YAML node type");
  }

 private:
  static absl::Status TooLarge(const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("the YAML expands to ", what,
                     " (aliases repeat what they name; write the values out)"));
  }

  absl::StatusOr<json> Scalar(const YAML::Node& node) {
    const std::string& s = node.Scalar();
    scalar_bytes_ += static_cast<int64_t>(s.size());
    if (scalar_bytes_ > options_.max_scalar_bytes) {
      return TooLarge(
          absl::StrCat("more than ", options_.max_scalar_bytes, " bytes"));
    }
    // yaml-cpp tags plain scalars "?" and quoted ones "!"; an explicit tag
    // such as !!str also keeps the value a string.
    if (options_.scalars_as_strings || node.Tag() != "?") return json(s);
    return PlainScalarToJson(s);
  }

  absl::StatusOr<json> Sequence(const YAML::Node& node,
                                const std::string& path) {
    json out = json::array();
    size_t i = 0;
    for (const YAML::Node& item : node) {
      absl::StatusOr<json> v = Convert(item, absl::StrCat(path, "[", i, "]"));
      if (!v.ok()) return v.status();
      out.push_back(*std::move(v));
      ++i;
    }
    return out;
  }

  absl::StatusOr<json> Map(const YAML::Node& node, const std::string& path) {
    json out = json::object();
    const std::string where =
        path.empty() ? "top level"
                     : util::ShortenForError(path, kMaxPathInError);
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        return absl::InvalidArgumentError(
            absl::StrCat("map key at ", where, " is not a scalar"));
      }
      const std::string& key = kv.first.Scalar();
      if (out.contains(key)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "duplicate key ", util::QuoteForError(key), " at ", where));
      }
      absl::StatusOr<json> v =
          Convert(kv.second, path.empty() ? key : absl::StrCat(path, ".", key));
      if (!v.ok()) return v.status();
      if (options_.drop_null_values && v->is_null()) continue;
      out[key] = *std::move(v);
    }
    return out;
  }

  const YamlJsonOptions& options_;
  int64_t nodes_ = 0;
  int64_t scalar_bytes_ = 0;
};

}  // namespace

absl::StatusOr<json> YamlToJson(const std::string& text,
                                const YamlJsonOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports 0-based lines and columns.
    return absl::InvalidArgumentError(
        absl::StrCat("YAML syntax error at line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  }
  return Converter(options).Convert(root, "");
}

}  // namespace cairn::util::yaml
