// Packs a directory into a .tar.gz: how a training job's /opt/ml/model and
// /opt/ml/output/data become model.tar.gz and output.tar.gz in the object
// root.
#ifndef CAIRN_SAGEMAKER_TAR_GZ_H_
#define CAIRN_SAGEMAKER_TAR_GZ_H_

#include <string>

#include "absl/status/status.h"

namespace cairn::sagemaker {

// Packs the regular files and directories below `src` into a gzip'ed
// POSIX (ustar) tar at `dest`, written to a temporary name and renamed,
// names relative to `src`, sorted. Symbolic links and other special files
// are skipped, never followed: an untrusted container wrote them. Names
// longer than ustar holds (100 bytes, or 155 + 100 split at a '/') are
// refused. Errors name the path.
absl::Status PackTarGz(const std::string& src, const std::string& dest);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TAR_GZ_H_
