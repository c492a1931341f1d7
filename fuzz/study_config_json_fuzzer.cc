// Feeds arbitrary bytes to StudySpecFromJson (JSON study config files):
// the protobuf JSON mapping of cairn.v1.StudySpec. Checks that it returns (no
// crash, no sanitizer report) and that an accepted spec, printed back as JSON,
// parses again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "cli/study_config.h"
#include "google/protobuf/util/json_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cairn::v1::StudySpec> spec =
      cairn::cli::StudySpecFromJson(text);
  if (!spec.ok()) return 0;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(*spec, &json).ok()) {
    return 0;
  }
  if (!cairn::cli::StudySpecFromJson(json).ok()) abort();
  return 0;
}
