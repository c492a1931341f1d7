// The one JSON shape of the API outside gRPC: the protobuf JSON mapping with
// every field printed (zeros and empty strings too), lowerCamelCase names,
// enums as names, int64 as strings. cairnd's REST API and every CLI `--json`
// output use these options, so a script reads the same shape from both.
#ifndef CAIRN_PROTO_CAIRN_V1_JSON_MAPPING_H_
#define CAIRN_PROTO_CAIRN_V1_JSON_MAPPING_H_

#include "google/protobuf/util/json_util.h"

namespace cairn {

inline google::protobuf::util::JsonPrintOptions ApiJsonPrintOptions() {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  return options;
}

}  // namespace cairn

#endif  // CAIRN_PROTO_CAIRN_V1_JSON_MAPPING_H_
