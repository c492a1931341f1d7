// See job_rest.h.
#include "aiplatform/job_rest.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cairn::aiplatform {

using cairn::v1::Job;

absl::StatusOr<int> ParseListPageSize(absl::string_view page_size) {
  int size = 0;
  if (!page_size.empty() && (!absl::SimpleAtoi(page_size, &size) || size < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pageSize: '", page_size.substr(0, 100),
                     "' is not a non-negative integer"));
  }
  if (size == 0) return kDefaultListPageSize;
  return std::min(size, kMaxListPageSize);
}

absl::Status SetJobProject(const std::string& project, Job& job) {
  bool ok = !project.empty() && project.size() <= 63;
  for (char c : project) {
    ok = ok && (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
                c == ':');
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("project '", project.substr(0, 100),
                     "': give 1 to 63 letters, digits, '-', '_', '.' or ':'"));
  }
  auto [it, inserted] =
      job.mutable_labels()->try_emplace(kProjectLabel, project);
  if (!inserted && it->second != project) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels.", kProjectLabel, ": '", it->second.substr(0, 100),
        "' differs from the project in the path, '", project, "'"));
  }
  return absl::OkStatus();
}

}  // namespace cairn::aiplatform
