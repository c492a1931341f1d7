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

absl::StatusOr<Job::State> ParseStateFilter(absl::string_view filter,
                                            absl::string_view what) {
  absl::string_view f = absl::StripAsciiWhitespace(filter);
  if (f.empty()) return Job::STATE_UNSPECIFIED;
  const size_t op = f.find_first_of("=:");
  Job::State state = Job::STATE_UNSPECIFIED;
  if (op != absl::string_view::npos &&
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(f.substr(0, op))) ==
          "state") {
    absl::string_view value = absl::StripAsciiWhitespace(f.substr(op + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (Job::State_Parse(absl::AsciiStrToUpper(value), &state) &&
        state != Job::STATE_UNSPECIFIED) {
      return state;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": '", filter.substr(0, 200),
      "' is not state=STATE (QUEUED, PREPARING, RUNNING, SUCCEEDED, FAILED, "
      "CANCELLING, CANCELLED)"));
}

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
