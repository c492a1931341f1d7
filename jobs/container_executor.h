// Runs a job in a container image (podman) when its JobSpec names one, and
// every other job with the process executor it wraps. The job runner, the
// replica groups and orphan recovery see one Executor either way.
//
// A container job is a foreground `podman run --rm` client (PodmanRunArgv)
// started as cairnd's own user (rootful podman needs root; the container
// itself runs as the job user). Its output goes straight from the container
// to the job's log (--log-driver passthrough), so it survives the client.
// Stop: SIGTERM to the client, which podman forwards to the container's init
// and the trainer; once the grace period has passed `podman kill` ends it.
// The exit is the trainer's exit code. An OOM kill (conmon's "oom" mark, or
// 137 under a memory limit that cairnd did not cause: podman's own OOM flag
// is unreliable on cgroup v1) says "out of memory" in JobExit::detail.
#ifndef CAIRN_JOBS_CONTAINER_EXECUTOR_H_
#define CAIRN_JOBS_CONTAINER_EXECUTOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "jobs/container_command.h"
#include "jobs/executor.h"
#include "jobs/job_user.h"
#include "util/clock.h"

namespace cairn::jobs {

// The absolute path of the container runtime: "" for "none" (container jobs
// refused); `flag` itself when it names
// a path (FailedPrecondition naming --container-runtime unless it is an
// executable file), else `flag` searched on PATH ("" when absent, which is
// not an error: cairnd then refuses container jobs).
absl::StatusOr<std::string> FindContainerRuntime(const std::string& flag);

// A container executor over `processes` (which runs the non-container jobs
// as `user`). Before it returns it removes every container labelled with
// options.data_dir that an earlier cairnd left (after a kill -9, conmon
// keeps them running), so a restarted attempt never runs beside its old
// container: call it only once the data dir is cairnd's (the store is
// open); it looks only when options.state_dir exists, i.e. once a container
// ran on this data dir. Error: FailedPrecondition when the runtime cannot
// list containers (the message names --container-runtime; "none" turns
// containers off). `clock` is not owned.
absl::StatusOr<std::unique_ptr<Executor>> NewContainerExecutor(
    const ContainerOptions& options, const JobUser& user,
    std::unique_ptr<Executor> processes, util::Clock* clock);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_CONTAINER_EXECUTOR_H_
