// See channel_mounts.h.
#include "sagemaker/channel_mounts.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "sagemaker/manifest.h"

namespace cairn::sagemaker {
namespace {

bool IsManifest(const cairn::v1::SageMakerChannel& channel) {
  return channel.data_source().has_s3_data_source() &&
         channel.data_source().s3_data_source().s3_data_type() ==
             "ManifestFile";
}

}  // namespace

std::string ChannelDir(const cairn::v1::SageMakerChannel& channel) {
  return absl::StrCat("/opt/ml/input/data/", channel.channel_name());
}

absl::Status CheckChannel(const ObjectRoot& objects,
                          const cairn::v1::SageMakerChannel& channel) {
  if (IsManifest(channel)) {
    return ResolveManifest(objects,
                           channel.data_source().s3_data_source().s3_uri())
        .status();
  }
  return objects.ResolveChannel(channel).status();
}

absl::StatusOr<std::vector<jobs::ContainerMount>> ChannelMounts(
    const ObjectRoot& objects, const cairn::v1::SageMakerChannel& channel) {
  const std::string dir = ChannelDir(channel);
  std::vector<jobs::ContainerMount> mounts;
  if (IsManifest(channel)) {
    absl::StatusOr<std::vector<ManifestObject>> listed = ResolveManifest(
        objects, channel.data_source().s3_data_source().s3_uri());
    if (!listed.ok()) return listed.status();
    for (ManifestObject& o : *listed) {
      mounts.push_back(
          {std::move(o.path), absl::StrCat(dir, "/", o.key), true});
    }
    return mounts;
  }
  absl::StatusOr<std::string> source = objects.ResolveChannel(channel);
  if (!source.ok()) return source.status();
  std::error_code ec;
  if (std::filesystem::symlink_status(*source, ec).type() !=
      std::filesystem::file_type::directory) {
    return absl::FailedPreconditionError(absl::StrCat(
        "channel '", channel.channel_name(), "': '", source->substr(0, 200),
        "' is not a directory in the object root"));
  }
  mounts.push_back({*std::move(source), dir, true});
  return mounts;
}

}  // namespace cairn::sagemaker
