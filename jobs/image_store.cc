// `podman image exists` as a given user. See image_store.h.
#include "jobs/image_store.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/container_image.h"
#include "jobs/subprocess.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

// The first line of `text` that reports an error, or "".
std::string ErrorLine(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (absl::StrContains(line, "level=error") ||
        absl::StrContains(line, "Error")) {
      return line.substr(0, 300);
    }
    start = end + 1;
  }
  return "";
}

}  // namespace

absl::StatusOr<bool> ImageInStore(const std::string& runtime,
                                  const std::string& image,
                                  const std::vector<std::string>& env,
                                  const JobUser& user) {
  if (std::string why = api::ImageReferenceProblem(image); !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("container image '", image.substr(0, 100), "' ", why));
  }
  absl::StatusOr<ProgramOutput> out =
      RunProgramAs({runtime, "image", "exists", image}, env, user);
  if (!out.ok()) return out.status();
  const std::string error = ErrorLine(out->err);
  if (out->exit_code == 0) return true;
  if (out->exit_code == 1 && error.empty()) return false;
  return absl::FailedPreconditionError(absl::StrCat(
      runtime, " image exists ", image, " as ", user.name, " (exit ",
      out->exit_code, "): ", error.empty() ? out->err.substr(0, 300) : error));
}

absl::Status CheckJobUserImage(const std::string& runtime,
                               const std::string& image, const JobUser& user) {
  const std::string path =
      runtime.find('/') != std::string::npos
          ? (access(runtime.c_str(), X_OK) == 0 ? runtime : "")
          : FindProgram(runtime, "/usr/local/bin:/usr/bin:/bin");
  if (path.empty()) return absl::OkStatus();
  const std::string home = user.home.empty() ? "/" : user.home;
  absl::StatusOr<bool> found = ImageInStore(
      path, image,
      {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + home,
       "USER=" + user.name, "LOGNAME=" + user.name},
      user);
  if (absl::IsInvalidArgument(found.status())) return found.status();
  if (!found.ok()) {
    spdlog::warn("slurm: cannot check image {} at submission: {}", image,
                 std::string(found.status().message()));
    return absl::OkStatus();
  }
  if (*found) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "container image '", image, "' is not in the image store of job user '",
      user.name,
      "' (cairnd --image-pull=never): load it for that user on the nodes "
      "(scripts/podman-user.sh), or start cairnd with --image-pull=missing"));
}

}  // namespace cairn::jobs
