// Feeds arbitrary bytes to StudySpecFromYaml (study config files of `cairn
// study create`): YAML parsing, the generic YAML-to-JSON conversion and the
// protobuf JSON parser. Checks that it returns (no crash, no sanitizer
// report) and that an accepted spec survives a JSON round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "cli/study_config.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cairn::v1::StudySpec> spec =
      cairn::cli::StudySpecFromYaml(text);
  if (!spec.ok()) return 0;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(*spec, &json).ok()) {
    return 0;
  }
  absl::StatusOr<cairn::v1::StudySpec> again =
      cairn::cli::StudySpecFromJson(json);
  if (!again.ok()) abort();
  return 0;
}
