// The training package a `cairn jobs submit training` sends: the files of
// --package-path DIR (under DIR's own name, so `-m DIR.module` imports), or
// of the --packages archives (unpacked with tar; an sdist's single top
// directory, e.g. trainer-0.1/, is the package root).
#ifndef CAIRN_CLI_JOB_PACKAGE_H_
#define CAIRN_CLI_JOB_PACKAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/job_service.pb.h"

namespace cairn::cli {

using PackageFileList = std::vector<cairn::v1::PackageFile>;

// The files under `dir` as <basename of dir>/<relative path>; symbolic
// links are followed, __pycache__ and *.pyc left out. NotFound /
// InvalidArgument naming --package-path when it is not a directory.
absl::StatusOr<PackageFileList> ReadPackageDir(const std::string& dir);

// The files of the archives (tar, tar.gz, ...), merged. The root of each is
// its single top-level directory when it has one that holds setup.py or
// `module`'s first package, else the archive's top. Errors name --packages.
absl::StatusOr<PackageFileList> ReadPackageArchives(
    const std::vector<std::string>& archives, const std::string& module);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_JOB_PACKAGE_H_
