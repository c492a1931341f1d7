// Reading a training package into PackageFiles: the files of a directory
// (the CLI's --package-path DIR, under DIR's own name, so `-m DIR.module`
// imports), or of source archives (the CLI's --packages, and
// trainingInput.packageUris that cairnd reads itself), unpacked with tar; an
// sdist's single top directory (e.g. trainer-0.1/) is the package root.
#ifndef CAIRN_AIPLATFORM_PACKAGE_READ_H_
#define CAIRN_AIPLATFORM_PACKAGE_READ_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/job_service.pb.h"

namespace cairn::aiplatform {

using PackageFileList = std::vector<cairn::v1::PackageFile>;

// The files under `dir` as <basename of dir>/<relative path>; symbolic
// links are followed, __pycache__ and *.pyc left out. InvalidArgument
// naming --package-path when it is not a directory.
absl::StatusOr<PackageFileList> ReadPackageDir(const std::string& dir);

// The files of the archives (tar, tar.gz, ...), merged. The root of each is
// its single top-level directory when it has one that holds setup.py or
// `module`'s first package, else the archive's top. Symbolic links inside
// an archive are left out (never followed). Errors start with `what` (e.g.
// "--packages").
absl::StatusOr<PackageFileList> ReadPackageArchives(
    const std::vector<std::string>& archives, const std::string& module,
    absl::string_view what = "--packages");

// The package of `input.packageUris` read by the server on its own machine:
// each an absolute local path or a file:// URI of a source archive. Because the
// server reads it with its own rights on behalf of a remote caller, each
// archive must be a regular file readable by everyone (mode o+r), so no
// caller gets at a file that only the server could read. InvalidArgument
// naming trainingInput.packageUris[i] and the value for another scheme
// (gs://, ...) or a relative path, a missing, unreadable or non-archive file;
// also when the archives hold more than kMaxPackageFiles files or a file over
// kMaxPackageFileBytes (api/limits.h).
absl::StatusOr<PackageFileList> ReadPackageUris(
    const cairn::v1::TrainingInput& input);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_PACKAGE_READ_H_
