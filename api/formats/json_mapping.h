// The one JSON shape of the API outside gRPC: the protobuf JSON mapping with
// every field printed (zeros and empty strings too), lowerCamelCase names,
// enums as names, int64 as strings. cairnd's REST API and every CLI `--json`
// output use it, so a script reads the same shape from both.
#ifndef CAIRN_API_FORMATS_JSON_MAPPING_H_
#define CAIRN_API_FORMATS_JSON_MAPPING_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace cairn::api::formats {

// The options of that shape for google::protobuf::util's JSON functions.
inline google::protobuf::util::JsonPrintOptions ApiJsonPrintOptions() {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  return options;
}

// Appends `message` to `*out` in that shape: the same JSON value that
// util::MessageToJsonString(message, ApiJsonPrintOptions()) prints (map
// entries may come in another order, which JSON objects do not fix), several
// times faster, so that a page of 10,000 trials prints fast enough for the
// web UI (json_mapping_bench compares the two; docs/benchmarks.md, "Web
// UI", has the figures). Well-known types print in their JSON forms
// (Timestamp, Duration, wrappers, Struct, Value, ListValue); the few parts
// it does not print itself (Any, FieldMask, strings that are not plain
// ASCII) go through util's printer. An error only where util's printer
// fails too (for example a Timestamp out of range); `*out` is then
// unspecified.
absl::Status AppendApiJson(const google::protobuf::Message& message,
                           std::string* out);

// AI Platform's shape, for its Job resource (AI Platform's REST routes and
// `cairn jobs ... --json`): the same mapping with fields at their default
// values left out, as Google's APIs print resources (what
// util::MessageToJsonString prints with default options).
absl::Status AppendAiPlatformJson(const google::protobuf::Message& message,
                                  std::string* out);

}  // namespace cairn::api::formats

#endif  // CAIRN_API_FORMATS_JSON_MAPPING_H_
