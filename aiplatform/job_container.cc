// Custom containers of AI Platform jobs. See job_container.h.
#include "aiplatform/job_container.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "aiplatform/machine_types.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::ReplicaConfig;
using cairn::v1::ReplicaGroup;
using cairn::v1::TrainingInput;

absl::Status Bad(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("trainingInput.", field, ": ", why));
}

// A replica group's config and machine type, by its name in the API.
struct GroupInput {
  const char* name;
  ReplicaGroup::Type type;
  const ReplicaConfig* config;
  const std::string* machine_type;
};

std::vector<GroupInput> Groups(const TrainingInput& in) {
  return {{"masterConfig", ReplicaGroup::MASTER, &in.master_config(),
           &in.master_type()},
          {"workerConfig", ReplicaGroup::WORKER, &in.worker_config(),
           &in.worker_type()},
          {"parameterServerConfig", ReplicaGroup::PARAMETER_SERVER,
           &in.parameter_server_config(), &in.parameter_server_type()},
          {"evaluatorConfig", ReplicaGroup::EVALUATOR, &in.evaluator_config(),
           &in.evaluator_type()}};
}

absl::Status CheckArguments(const TrainingInput& in) {
  const ReplicaConfig& master = in.master_config();
  for (const GroupInput& g : Groups(in)) {
    const ReplicaConfig& c = *g.config;
    // Both would be the arguments after the ENTRYPOINT. (args with
    // containerCommand is what TFX's trainer sends, and runs.)
    if (in.args_size() > 0 && c.container_args_size() > 0) {
      return Bad("args", absl::StrCat("cannot be used with ", g.name,
                                      ".containerArgs: both are the "
                                      "arguments after the ENTRYPOINT"));
    }
    if (c.container_args_size() > 0 &&
        c.container_args().size() == master.container_args().size() &&
        std::equal(c.container_args().begin(), c.container_args().end(),
                   master.container_args().begin())) {
      continue;
    }
    if (c.container_args_size() > 0) {
      return Bad(absl::StrCat(g.name, ".containerArgs"),
                 "differs from masterConfig.containerArgs; every replica of "
                 "a job gets the same arguments here");
    }
  }
  return absl::OkStatus();
}

void SetLimits(const std::string& machine_type, cairn::v1::ContainerSpec& c) {
  const MachineLimits limits = MachineTypeLimits(machine_type);
  c.set_cpus(limits.cpus);
  c.set_memory_bytes(limits.memory_bytes);
}

}  // namespace

bool UsesCustomContainer(const TrainingInput& in) {
  return !in.master_config().image_uri().empty();
}

absl::Status AddContainer(const TrainingInput& in,
                          cairn::v1::TrialJobTemplate& tmpl) {
  if (!UsesCustomContainer(in)) {
    for (const GroupInput& g : Groups(in)) {
      if (!g.config->image_uri().empty()) {
        return Bad(absl::StrCat(g.name, ".imageUri"),
                   "needs masterConfig.imageUri (the master's image is every "
                   "replica's default)");
      }
    }
    return absl::OkStatus();
  }
  if (in.package_uris_size() > 0) {
    return Bad("packageUris",
               "cannot be used with masterConfig.imageUri: a job runs a "
               "Python package or a custom container, not both");
  }
  if (absl::Status s = CheckArguments(in); !s.ok()) return s;
  const ReplicaConfig& master = in.master_config();
  cairn::v1::ContainerSpec& c = *tmpl.mutable_container();
  c.set_image(master.image_uri());
  *c.mutable_command() = master.container_command();
  if (master.container_args_size() > 0) {
    *c.mutable_args() = master.container_args();
  } else {
    *c.mutable_args() = in.args();
  }
  SetLimits(in.master_type(), c);
  for (ReplicaGroup& group : *tmpl.mutable_replicas()) {
    for (const GroupInput& g : Groups(in)) {
      if (g.type != group.type() || g.type == ReplicaGroup::MASTER) continue;
      cairn::v1::ContainerSpec& o = *group.mutable_container();
      o.set_image(g.config->image_uri());
      *o.mutable_command() = g.config->container_command();
      SetLimits(*g.machine_type, o);
    }
  }
  return absl::OkStatus();
}

}  // namespace cairn::aiplatform
