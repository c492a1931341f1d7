// AI Platform's job id rule: letters, digits and underscores, starting with a
// letter, at most 128 characters.
#ifndef CAIRN_AIPLATFORM_JOB_ID_H_
#define CAIRN_AIPLATFORM_JOB_ID_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cairn::aiplatform {

inline constexpr int kMaxJobIdLength = 128;

// OK, or InvalidArgument naming the job id (at most its first 64 characters)
// and the rule it breaks.
absl::Status ValidateJobId(absl::string_view job_id);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_ID_H_
