// Where a training job's input channels come from on cairnd's machine and
// how they appear in its container: read-only bind mounts below
// /opt/ml/input/data/<channel>, never copies. An S3Prefix channel (or a
// FileSystemDataSource) is its directory in the object root; a ManifestFile
// channel (manifest.h) is one mount per listed object, at
// /opt/ml/input/data/<channel>/<relative key>, so the container sees
// exactly the listed files.
#ifndef CAIRN_SAGEMAKER_CHANNEL_MOUNTS_H_
#define CAIRN_SAGEMAKER_CHANNEL_MOUNTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cairn/v1/sagemaker.pb.h"
#include "jobs/executor.h"
#include "sagemaker/object_root.h"

namespace cairn::sagemaker {

// The container directory of a channel: /opt/ml/input/data/<channel name>.
std::string ChannelDir(const cairn::v1::SageMakerChannel& channel);

// What CreateTrainingJob checks of `channel` against the object root: its
// location resolves inside it and, for ManifestFile, the manifest and each
// object it lists pass manifest.h's checks. InvalidArgument naming the
// field and value otherwise.
absl::Status CheckChannel(const ObjectRoot& objects,
                          const cairn::v1::SageMakerChannel& channel);

// The read-only mounts presenting `channel` at ChannelDir, resolved afresh
// (at each start: links may have changed since the job was created).
// InvalidArgument as CheckChannel; FailedPrecondition when an S3Prefix or
// FileSystemDataSource is no directory.
absl::StatusOr<std::vector<jobs::ContainerMount>> ChannelMounts(
    const ObjectRoot& objects, const cairn::v1::SageMakerChannel& channel);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_CHANNEL_MOUNTS_H_
