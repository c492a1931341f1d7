// Parsing and formatting of resource names: "studies/{study}" and
// "studies/{study}/trials/{trial}", ids being positive decimal integers.
#ifndef CAIRN_API_RESOURCE_NAMES_H_
#define CAIRN_API_RESOURCE_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::api {

struct TrialName {
  int64_t study_id = 0;
  int64_t trial_id = 0;
};

std::string StudyName(int64_t study_id);
std::string TrialResourceName(int64_t study_id, int64_t trial_id);

// InvalidArgument naming `field` and the value when `name` is malformed.
absl::StatusOr<int64_t> ParseStudyName(absl::string_view name,
                                       absl::string_view field);
absl::StatusOr<TrialName> ParseTrialName(absl::string_view name,
                                         absl::string_view field);

}  // namespace cairn::api

#endif  // CAIRN_API_RESOURCE_NAMES_H_
