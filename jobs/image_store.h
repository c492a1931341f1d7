// Whether a container image is in a podman image store: the check both the
// local container executor and the Slurm executor make before a job starts,
// so that a missing image fails the start, naming the image, instead of the
// job at run time.
#ifndef CAIRN_JOBS_IMAGE_STORE_H_
#define CAIRN_JOBS_IMAGE_STORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

// Runs `runtime image exists IMAGE` (runtime an absolute path) with `env` as
// its whole environment, as `user` (RunProgramAs, jobs/subprocess.h: the
// store is that user's; rootless podman needs its setuid helpers). True
// when the image is there, false when podman says it is not (exit 1 and no
// error on stderr). InvalidArgument naming the image when it is not a
// valid reference (api::ImageReferenceProblem; podman is not run);
// FailedPrecondition naming the command and podman's first error line
// when the check itself fails.
absl::StatusOr<bool> ImageInStore(const std::string& runtime,
                                  const std::string& image,
                                  const std::vector<std::string>& env,
                                  const JobUser& user);

// The Slurm executor's check at submission: `image` in the rootless store
// of the job `user` (HOME is the user's home, where podman keeps it), with
// `runtime` (a name looked up on this host's PATH, or an absolute path) as
// on the nodes. A user's store normally lives in a home the nodes share,
// so an image missing here is missing there: FailedPrecondition naming
// the image and the user. OK when it is there, when this host has no such
// runtime, or when the check itself fails (logged): the node's own check
// decides then. InvalidArgument for a bad image reference.
absl::Status CheckJobUserImage(const std::string& runtime,
                               const std::string& image, const JobUser& user);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_IMAGE_STORE_H_
