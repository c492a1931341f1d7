// The cluster of a trial's replicas and what each replica is told about it,
// as AI Platform Training tells it: TF_CONFIG (cluster, task, job,
// environment) and PyTorch's MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK.
//
// A trial's replicas, master first: the master (task type "master", or
// "chief" with use_chief_in_tf_config), then the workers ("worker"), the
// parameter servers ("ps") and the evaluators ("evaluator"), each group
// indexed from 0. A template without replicas is one master. Every replica
// but the evaluators listens on 127.0.0.1:port and is in TF_CONFIG's
// cluster; evaluators are not part of the training cluster (as on AI
// Platform) and have no port.
#ifndef CAIRN_JOBS_TF_CONFIG_H_
#define CAIRN_JOBS_TF_CONFIG_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"

namespace cairn::jobs {

// One process of a trial.
struct ReplicaTask {
  cairn::v1::ReplicaGroup::Type group = cairn::v1::ReplicaGroup::MASTER;
  std::string type;  // TF_CONFIG task type: master|chief, worker, ps, evaluator
  int index = 0;     // Within its type.
  int port = 0;      // 127.0.0.1:port; 0 for evaluators.
  std::vector<int> gpus;  // CUDA_VISIBLE_DEVICES.

  bool is_master() const { return group == cairn::v1::ReplicaGroup::MASTER; }
  // AI Platform's node name: "master-replica-0", "worker-replica-1",
  // "ps-replica-0", "evaluator-replica-0" (also for a "chief").
  std::string Name() const;
};

// The replicas of `tmpl`, master first, without ports or GPUs. A template
// without replicas gives one master.
std::vector<ReplicaTask> ExpandReplicas(
    const cairn::v1::TrialJobTemplate& tmpl);

// GPUs a trial of `tmpl` needs: gpus_per_trial without replicas, else the
// sum of count * gpus_per_replica.
int TrialGpuCount(const cairn::v1::TrialJobTemplate& tmpl);

// Deals `gpus` (TrialGpuCount of them) out to `replicas` in order, and a
// free 127.0.0.1 port to each replica but the evaluators (PickFreePorts).
// A template without replicas: its one master gets all of `gpus`.
// Unavailable if no port can be had.
absl::Status PlaceReplicas(const cairn::v1::TrialJobTemplate& tmpl,
                           const std::vector<int>& gpus,
                           std::vector<ReplicaTask>& replicas);

// `n` distinct TCP ports free on 127.0.0.1 right now (bound together to
// port 0, then released; a process may still take one before the replica
// binds it).
absl::StatusOr<std::vector<int>> PickFreePorts(int n);

// TF_CONFIG of `task` in `cluster`: {"cluster": {type: ["127.0.0.1:PORT",
// ...]} for every type but evaluator, "task": {"type", "index", "trial"},
// "job": <job_json>, "environment": "cloud"}. `job_json` is a JSON object's
// text (TrialJobTemplate.tf_config_job_json); empty or unparsable gives {}.
std::string TfConfigJson(const std::vector<ReplicaTask>& cluster,
                         const ReplicaTask& task, const std::string& trial_id,
                         const std::string& job_json);

// PyTorch's variables for `task`: MASTER_ADDR=127.0.0.1, MASTER_PORT (the
// master's port), WORLD_SIZE (master + workers), and RANK (master 0,
// worker i i+1). Parameter servers and evaluators are not in the PyTorch
// world: they get MASTER_ADDR, MASTER_PORT and WORLD_SIZE but no RANK.
std::map<std::string, std::string> TorchEnv(
    const std::vector<ReplicaTask>& cluster, const ReplicaTask& task);

// The task type and index a TF_CONFIG (TfConfigJson's) names, or {"", -1}
// when it names none.
std::pair<std::string, int> TfConfigTask(const std::string& tf_config);

// `tf_config` with its cluster's address of each (type, index) replaced by
// addresses[{type, index}] ("HOST:PORT") where given: how a cluster
// executor moves the cluster cairnd planned on 127.0.0.1 onto the hosts and
// ports its job was given. Returned unchanged when it does not parse.
std::string RelocateTfConfig(
    const std::string& tf_config,
    const std::map<std::pair<std::string, int>, std::string>& addresses);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_TF_CONFIG_H_
