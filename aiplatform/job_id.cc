// See job_id.h.
#include "aiplatform/job_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cairn::aiplatform {

absl::Status ValidateJobId(absl::string_view job_id) {
  auto bad = [job_id](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id '", absl::CHexEscape(job_id.substr(0, 64)),
                     job_id.size() > 64 ? "...' " : "' ", why));
  };
  if (job_id.empty()) return absl::InvalidArgumentError("job id is empty");
  if (job_id.size() > kMaxJobIdLength) {
    return bad(absl::StrCat("is longer than ", kMaxJobIdLength, " characters"));
  }
  if (!absl::ascii_isalpha(job_id[0])) return bad("must start with a letter");
  for (char c : job_id) {
    if (!absl::ascii_isalnum(c) && c != '_') {
      return bad("may hold only letters, digits and underscores");
    }
  }
  return absl::OkStatus();
}

}  // namespace cairn::aiplatform
