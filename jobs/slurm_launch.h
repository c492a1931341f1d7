// A multi-replica trial attempt inside one Slurm job: the group file cairnd
// writes into the job dir, and the two modes of cairnd that run in the job
// (`cairnd --slurm-batch FILE` as the batch script's program,
// `cairnd --slurm-replica FILE` as each srun task).
//
// How a group runs (jobs/slurm_executor.h submits it):
//  - the batch program runs one srun step of one task per replica
//    (SrunArgv: --kill-on-bad-exit=1); task SLURM_PROCID runs replica
//    SLURM_PROCID of the group file (0 is the master);
//  - rendezvous: each task takes a free TCP port on its own node and writes
//    "ADDRESS PORT NODE" into the run dir, <job dir>/.cairn-slurm/
//    <SLURM_JOB_ID>.<SLURM_RESTART_COUNT>, on the shared filesystem; ADDRESS
//    is the node's NodeAddr (`scontrol -o show node $SLURMD_NODENAME`: the
//    address Slurm itself reaches the node at), else the node name. Ports are
//    picked at run time on the node that binds them, so replicas sharing a
//    node (or other jobs there) never collide, which a port derived from the
//    job id cannot promise. Each task waits for every other's line, then
//    starts its replica with TF_CONFIG's cluster and MASTER_ADDR/MASTER_PORT
//    moved onto those addresses (jobs/tf_config.h: RelocateTfConfig);
//  - each replica's stdout and stderr go to its own log (the job dir's
//    job.log for the master, <name>.log for the others), as on the local
//    executor;
//  - outcome (jobs/replica_group.h, as locally): the master's exit is the
//    job's: its task writes it to the run dir ("master.exit") and the batch
//    program ends the same way (the same code, or killed by the same
//    signal). Once the master has exited, the other replicas are stopped
//    (SIGTERM, SIGKILL after the grace period) and their tasks exit 0. A
//    replica ending abnormally before that makes its task exit non-zero,
//    srun ends the whole step, and the job fails with srun's code: cairnd
//    restarts the whole group (one restart) in a new job that resumes from
//    the job dir. A replica exiting 0 early is left alone.
//  - SIGTERM (scancel, the time limit's --signal) reaches every replica;
//    a replica in a container image (jobs/slurm_container.h) also gets
//    `podman stop` from its task, which then removes the container;
//  - the batch program removes its job's containers left on its node.
//  - cleanup: the run dir goes when the step ends; the group file (it holds
//    the master's token) when the batch program ran to its end, whichever
//    cairnd is up by then; a batch ended by a signal leaves it for a
//    requeued run, and the submitting executor removes it when the job ends.
#ifndef CAIRN_JOBS_SLURM_LAUNCH_H_
#define CAIRN_JOBS_SLURM_LAUNCH_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/container_command.h"
#include "jobs/executor.h"

namespace cairn::jobs {

// One replica of a group file.
struct SlurmReplica {
  std::string name;  // e.g. "worker-replica-0"
  std::vector<std::string> argv;
  // Over the task's own environment (Slurm's and sbatch's clean base).
  // CUDA_VISIBLE_DEVICES is never taken from here: Slurm sets it.
  std::map<std::string, std::string> env;
  std::string working_dir;  // "" = the task's.
  std::string log_path;
  // Set: the replica runs in this image (jobs/slurm_container.h), argv
  // after it; env becomes the container's environment.
  std::optional<ContainerJob> container;
};

// What cairnd tells a multi-replica job.
struct SlurmGroup {
  std::string srun;      // srun's path.
  std::string scontrol;  // scontrol's path.
  // The program the tasks run (cairnd); it gets "--slurm-replica FILE".
  std::string launcher;
  // Where run dirs go (<job dir>/.cairn-slurm; on the shared filesystem).
  std::string run_root;
  absl::Duration grace = absl::Seconds(10);
  // How long a task waits for the others to report their address.
  absl::Duration rendezvous_timeout = absl::Seconds(120);
  std::vector<SlurmReplica> replicas;  // The master first.
  // For replicas in a container: runtime, pull policy and data_dir label.
  ContainerOptions containers;
};

// The group file's text (JSON), and back. InvalidArgument on a malformed
// file (the message says what is wrong).
std::string SlurmGroupJson(const SlurmGroup& group);
absl::StatusOr<SlurmGroup> ParseSlurmGroup(const std::string& json);

// The NodeAddr in `scontrol -o show node NAME`'s output, or "".
std::string ParseNodeAddr(const std::string& scontrol_out);

// `cairnd --slurm-batch FILE`: runs the srun step and ends as the master
// did (see above). Returns the exit code (or does not return when the
// master was killed by a signal: it raises the same one).
int RunSlurmBatch(const std::string& group_file);

// `cairnd --slurm-replica FILE`: one srun task (see above). Returns its exit
// code.
int RunSlurmReplica(const std::string& group_file);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_SLURM_LAUNCH_H_
