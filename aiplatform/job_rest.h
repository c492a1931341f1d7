// Small facts of AI Platform's jobs API shared by its clients: list page
// sizes (the list filter is aiplatform/job_filter.h),
// and the project of a job submitted through AI Platform's REST surface.
#ifndef CAIRN_AIPLATFORM_JOB_REST_H_
#define CAIRN_AIPLATFORM_JOB_REST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/aiplatform.pb.h"

namespace cairn::aiplatform {

// The job's label that records the project of `projects/{project}/jobs`
// it was created in (one cairnd serves every project name: the project is
// recorded, not a namespace).
inline constexpr char kProjectLabel[] = "aiplatform_project";

// AI Platform's list pages: pageSize unset (or 0) means 20, more than 100
// means 100.
inline constexpr int kDefaultListPageSize = 20;
inline constexpr int kMaxListPageSize = 100;

// The page size of a REST list's `pageSize` text ("" when unset), by the
// rules above. InvalidArgument naming pageSize and the value for anything
// but a non-negative integer.
absl::StatusOr<int> ParseListPageSize(absl::string_view page_size);

// Records `project` in `job`'s labels (kProjectLabel). InvalidArgument
// naming the project for a name that is not 1-63 letters, digits, '-', '_',
// '.' or ':', or when the job's labels already hold another project.
absl::Status SetJobProject(const std::string& project, cairn::v1::Job& job);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_REST_H_
