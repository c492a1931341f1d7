// A job's training package on disk: the files the client sent (the contents
// of --package-path, or of the --packages archive) written into the job's
// staging dir at submit time, so later edits of the user's copy do not change
// a running job. The staging dir goes on PYTHONPATH.
#ifndef CAIRN_AIPLATFORM_PACKAGE_STAGING_H_
#define CAIRN_AIPLATFORM_PACKAGE_STAGING_H_

#include <string>

#include "absl/status/status.h"
#include "cairn/v1/job_service.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace cairn::aiplatform {

using PackageFiles = google::protobuf::RepeatedPtrField<cairn::v1::PackageFile>;

// Checks the package without writing anything. InvalidArgument:
//  - no files ("give --package-path or --packages");
//  - a path that is empty, absolute, or has an empty, "." or ".." part,
//    or is given twice (naming it);
//  - `python_module` is not in it: neither A/B.py nor A/B/__main__.py for
//    module A.B (naming the module and the files looked for).
absl::Status CheckPackage(const PackageFiles& files,
                          const std::string& python_module);

// Writes `files` under `dir` (created with its parents; it must not exist
// yet: AlreadyExists), files 0644 (0755 when executable), directories 0755,
// readable by the job user. On error `dir` is removed again.
// REQUIRES: CheckPackage(files, ...) is OK.
absl::Status StagePackage(const PackageFiles& files, const std::string& dir);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_PACKAGE_STAGING_H_
