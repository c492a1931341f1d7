// The one way config text in YAML (JSON is YAML too) becomes the JSON that
// protobuf's JSON mapping then reads: study configs (cairn study create
// --config) and AI Platform job configs (cairn jobs submit training
// --config, and the body of POST /v1/projects/{p}/jobs, which cairnd parses).
// Generic, so the proto stays the one schema.
//
// Bounded: YAML aliases let a few hundred bytes stand for billions of nodes
// (a "billion laughs", enough to exhaust cairnd's memory), so the
// expansion stops at kMaxYamlJsonNodes values or kMaxYamlJsonScalarBytes
// bytes of scalars (by default): no more than the largest request body (4 MB)
// could spell out without aliases. Nesting is bounded by yaml-cpp's parser.
// Pure and thread-safe.
#ifndef CAIRN_UTIL_YAML_YAML_JSON_H_
#define CAIRN_UTIL_YAML_YAML_JSON_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace cairn::util::yaml {

// A config file (study or job config) is read up to this size
// (bounded_file.h): the largest request body is 4 MB.
inline constexpr size_t kMaxConfigFileBytes = 16 << 20;

inline constexpr int64_t kMaxYamlJsonNodes = 2'000'000;
inline constexpr int64_t kMaxYamlJsonScalarBytes = int64_t{16} << 20;

struct YamlJsonOptions {
  // true: every scalar becomes a JSON string (protobuf's JSON parser reads
  // numbers and booleans from strings too, so a value parses by its field's
  // type). false: plain (unquoted) scalars are typed by the YAML 1.2 core
  // schema: integers become JSON integers, decimal or exponent numbers
  // doubles, true/false (true, True, TRUE) booleans, null/~/empty null, and
  // .inf/-.inf/.nan the strings "Infinity"/"-Infinity"/"NaN" (the protobuf
  // JSON mapping's spelling); quoted scalars always stay strings.
  bool scalars_as_strings = false;
  // Leave out map entries whose value is null ("labels:" with nothing).
  bool drop_null_values = false;
  // The bounds on the expansion (tests lower them).
  int64_t max_values = kMaxYamlJsonNodes;
  int64_t max_scalar_bytes = kMaxYamlJsonScalarBytes;
};

// Parses one YAML document into JSON: maps become objects (keys must be
// scalars and unique), sequences arrays. InvalidArgument for a syntax error
// ("YAML syntax error at line L, column C: ..."), a non-scalar or duplicate
// map key (naming it and its path, e.g. "parameters[0]"), or a document
// past the bounds above.
absl::StatusOr<nlohmann::json> YamlToJson(const std::string& text,
                                          const YamlJsonOptions& options = {});

}  // namespace cairn::util::yaml

#endif  // CAIRN_UTIL_YAML_YAML_JSON_H_
