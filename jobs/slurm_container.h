// A replica's container image on a Slurm node: the group file's form of a
// ContainerJob, and the podman commands a replica's task runs there as the
// job user (rootless podman: Slurm runs tasks as the job user). The podman
// run command line is PodmanRunArgv's (jobs/container_command.h), so the
// contract is the local executor's: job dir at the same path, env from a
// private file, the hypertune file at its in-container default path,
// labels, --network=host, --init. jobs/slurm_launch.h runs these.
//
// Why the task stops the container itself: conmon detaches from the podman
// client (its own session, parent 1), so Slurm's SIGKILL of the task never
// reaches the container under proctrack/linuxproc or pgid; a task that got
// SIGTERM starts a detached `podman stop` (SIGTERM, SIGKILL after the grace
// period), and the batch program removes whatever is left with its job's
// label (cairn.slurm_job=SLURM_JOB_ID), with the same grace.
#ifndef CAIRN_JOBS_SLURM_CONTAINER_H_
#define CAIRN_JOBS_SLURM_CONTAINER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/container_command.h"
#include "jobs/executor.h"
#include "nlohmann/json.hpp"

namespace cairn::jobs {

// The runtime cairnd names for the nodes (--container-runtime with
// --executor=slurm): "" for "none", "podman" for "", else `flag` itself
// when it is a program name ([A-Za-z0-9._+-]) or an absolute path without
// whitespace; InvalidArgument naming the flag otherwise.
absl::StatusOr<std::string> SlurmContainerRuntime(const std::string& flag);

// `job` as a JSON object of the group file, and back. InvalidArgument
// naming the field when `j` is malformed.
nlohmann::json ContainerJobJson(const ContainerJob& job);
absl::StatusOr<ContainerJob> ParseContainerJob(const nlohmann::json& j);

// A replica's container, ready to run on this node.
struct SlurmContainer {
  std::string runtime;            // podman's absolute path on this node.
  std::string name;               // The container's name.
  std::string env_file;           // Its environment (0600); removed after.
  std::vector<std::string> argv;  // `podman run ...`.
};

// Prepares a container for `job` on this node, run as the calling user
// (the job user): podman found (options.runtime: a path, or a name on
// PATH), the job's hypertune file (CLOUD_ML_HP_METRIC_FILE in `env`)
// created so that it can be bind-mounted, the GPUs Slurm gave the task
// (`cuda_visible`) as devices, `env` written to `env_file` (0600), any
// container of the same name an earlier run of this attempt left on this
// node removed (one attempt never runs twice), and PodmanRunArgv with the
// label cairn.slurm_job=`slurm_job`. FailedPrecondition naming what is
// missing; InvalidArgument for an env a container cannot take.
absl::StatusOr<SlurmContainer> PrepareSlurmContainer(
    const ContainerOptions& options, ContainerJob job,
    const std::map<std::string, std::string>& env,
    const std::string& cuda_visible, const std::string& env_file,
    const std::string& slurm_job);

// Starts `podman stop --time=GRACE NAME` (SIGTERM to the container's init
// and the trainer, SIGKILL once `grace` has passed) detached from the
// task, in its own session, so that it outlives the task (srun SIGKILLs
// its tasks soon after a SIGTERM). Returns at once.
void StopSlurmContainer(const SlurmContainer& container, absl::Duration grace);

// After the podman client has ended: removes the container (still there
// when the client was killed: SIGTERM, SIGKILL after `grace`) and the env
// file.
void CleanUpSlurmContainer(const SlurmContainer& container,
                           absl::Duration grace);

// Removes every container on this node labelled
// cairn.slurm_job=`slurm_job` (`runtime` a path or a name on PATH) as
// `podman rm --force --time=GRACE` does (SIGTERM, SIGKILL after `grace`):
// the batch program's cleanup, at its first signal (`detached`: the
// command outlives the batch, which slurmstepd SIGKILLs soon) and once
// its step has ended (waits for the command).
void RemoveSlurmJobContainers(const std::string& runtime,
                              const std::string& slurm_job,
                              absl::Duration grace, bool detached);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_SLURM_CONTAINER_H_
