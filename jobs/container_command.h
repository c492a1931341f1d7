// The `podman run` command line of a container job: the same contract as a
// process job (the job user, the host network, the job dir at the same path,
// the job's environment, its log) plus the image, mounts, limits, devices and
// labels of JobSpec::container. Kept apart from the executor so that the
// command is tested without a runtime.
#ifndef CAIRN_JOBS_CONTAINER_COMMAND_H_
#define CAIRN_JOBS_CONTAINER_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/executor.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

// Where cloudml-hypertune writes when CLOUD_ML_HP_METRIC_FILE is unset; the
// job's metric file is bind-mounted there too.
inline constexpr char kContainerHypertunePath[] =
    "/tmp/hypertune/output.metrics";

// How cairnd runs containers (cairnd flags in brackets).
struct ContainerOptions {
  // Absolute path of podman [--container-runtime, default podman on PATH].
  std::string runtime;
  // "never" (default): only images in the local store; "missing": podman
  // pulls an absent image from its configured registries [--image-pull].
  std::string pull = "never";
  // cairnd's data dir: the cairn.data_dir label and part of each container's
  // name, so that a restarted cairnd finds its own containers.
  std::string data_dir;
  // Private directory (0700) with a working dir per running container
  // client: its env file (tokens never appear on a command line) and
  // conmon's "oom" mark. Made before the first container.
  std::string state_dir;
  // CPUs of this machine: a larger --cpus is lowered to it (podman refuses
  // more; a CPU quota above the machine is no limit). 0: no clamp.
  int host_cpus = 0;
  // Between SIGTERM and SIGKILL (podman's --stop-timeout).
  absl::Duration grace_period = absl::Seconds(10);
};

// The container name of `job` under `data_dir`: "cairn-" + a hash of the
// data dir + study, trial, attempt and replica from job.labels, each reduced
// to [A-Za-z0-9_.-]. podman refuses a second container of the same name, so
// an attempt never runs twice.
std::string ContainerName(const std::string& data_dir, const ContainerJob& job);

// The container's environment: `spec.env` over LANG=C.UTF-8 and HOME (the job
// dir, CAIRN_JOB_DIR), as env-file lines "KEY=VALUE\n". The image keeps its
// own PATH. InvalidArgument naming the variable when a name or value holds a
// newline (an env file cannot carry it) or a name is empty or has '='.
absl::StatusOr<std::string> ContainerEnvFile(const JobSpec& spec);

// Where ContainerGpuDevices looks (tests point them at temp dirs).
struct GpuDeviceRoots {
  std::string dev = "/dev";
  std::vector<std::string> cdi = {"/etc/cdi", "/var/run/cdi"};
  std::vector<std::string> lib_dirs = {"/usr/lib/x86_64-linux-gnu",
                                       "/usr/lib64"};
  std::string bin_dir = "/usr/bin";
};

// The --device values that give a container exactly the GPUs `visible`
// (CUDA_VISIBLE_DEVICES, e.g. "0,2"): "nvidia.com/gpu=N" for each when a
// CDI spec there names nvidia.com/gpu; else DEV/nvidiaN for each plus
// nvidiactl, nvidia-uvm and nvidia-uvm-tools, those that exist. Empty when
// `visible` is empty or no node exists (a machine without GPUs: the caller
// warns).
std::vector<std::string> ContainerGpuDevices(const std::string& visible,
                                             const GpuDeviceRoots& roots = {});

// With device nodes (not CDI, whose spec mounts its own): the host's
// driver libraries (libcuda.so.1, libnvidia-ml.so.1,
// libnvidia-ptxjitcompiler.so.1) and nvidia-smi, read-only at the same
// paths, those that exist. They must match the host's kernel module, so
// they come from the host, never from the image.
std::vector<ContainerMount> ContainerGpuDriverMounts(
    const GpuDeviceRoots& roots = {});

// Gives `job` exactly the GPUs `visible` names (CUDA_VISIBLE_DEVICES):
// ContainerGpuDevices appended to job.devices and, with device nodes,
// ContainerGpuDriverMounts to job.mounts, both under `roots`. The one place
// both the local executor and a Slurm task choose a container's GPUs.
// Returns false when `visible` names GPUs but none was found (a machine
// without device nodes or CDI spec: the caller may warn); `job` is then
// unchanged.
bool AddContainerGpus(const std::string& visible, ContainerJob& job,
                      const GpuDeviceRoots& roots = {});

// argv of `podman run` for `spec` (spec.container set) as `user`, named
// `name`, reading its environment from `env_file`:
//   run --rm --pull=P --name N --init --network=host --user UID:GID
//   [--userns=keep-id when cairnd is not root] --log-driver passthrough
//   --stop-timeout S --label ... --env-file F -w JOB_DIR
//   --mount type=bind,... (job dir; hypertune file at
//   kContainerHypertunePath; CAIRN_PYTHON_SDK read-only; spec mounts)
//   [--cpus] [--memory] [--pids-limit] [--device]... [--entrypoint JSON]
//   IMAGE spec.argv...
// InvalidArgument for a bad image (api::ImageReferenceProblem);
// FailedPrecondition naming the path when a mounted path is not absolute or
// holds ',' or a newline (they would change --mount's meaning).
absl::StatusOr<std::vector<std::string>> PodmanRunArgv(
    const ContainerOptions& options, const JobUser& user, const JobSpec& spec,
    const std::string& name, const std::string& env_file);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_CONTAINER_COMMAND_H_
