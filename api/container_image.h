// What the API accepts as a container image reference
// (ContainerSpec.image): checked at submission and again before podman runs
// it, so that an image never reads as one of the runtime's flags.
#ifndef CAIRN_API_CONTAINER_IMAGE_H_
#define CAIRN_API_CONTAINER_IMAGE_H_

#include <string>

namespace cairn::api {

// Why `image` is not a valid image reference (a letter or digit, then
// letters, digits and . _ - / : @; at most 255 characters), or "" if it is.
std::string ImageReferenceProblem(const std::string& image);

}  // namespace cairn::api

#endif  // CAIRN_API_CONTAINER_IMAGE_H_
