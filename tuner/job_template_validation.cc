// Checks of a study's job_template on its own: the command, restarts,
// time limit, environment names and the multi-replica groups.
#include "tuner/job_template_validation.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/container_image.h"
#include "tuner/validation_errors.h"

namespace cairn::tuner {
namespace {

using validation::Bad;
using validation::Quote;

// Bounds of a multi-replica template: replicas of one group, GPUs of one
// replica, processes of one trial.
constexpr int kMaxReplicasPerGroup = 64;
constexpr int kMaxGpusPerReplica = 16;
constexpr int kMaxReplicasPerTrial = 128;
constexpr int kMaxContainerMounts = 32;

absl::Status ValidateReplicaGroup(const cairn::v1::ReplicaGroup& g, int i) {
  const std::string where = absl::StrCat("job_template.replicas[", i, "]");
  if (g.type() == cairn::v1::ReplicaGroup::TYPE_UNSPECIFIED) {
    return Bad(where + ".type",
               "is unset; one of MASTER, WORKER, PARAMETER_SERVER, EVALUATOR");
  }
  if (g.count() < 0 || g.count() > kMaxReplicasPerGroup) {
    return Bad(where + ".count", absl::StrCat(g.count(), " must be in [0, ",
                                              kMaxReplicasPerGroup, "]"));
  }
  if (g.gpus_per_replica() < 0 || g.gpus_per_replica() > kMaxGpusPerReplica) {
    return Bad(where + ".gpus_per_replica",
               absl::StrCat(g.gpus_per_replica(), " must be in [0, ",
                            kMaxGpusPerReplica, "]"));
  }
  if (g.type() == cairn::v1::ReplicaGroup::MASTER && g.count() != 1) {
    return Bad(where + ".count",
               absl::StrCat(g.count(),
                            " for MASTER; there is exactly one "
                            "master (count 1)"));
  }
  return absl::OkStatus();
}

// Multi-replica templates: each type at most once, exactly one MASTER
// group (count 1), bounded counts and GPUs; GPUs come from
// gpus_per_replica, not gpus_per_trial.
absl::Status ValidateReplicas(const cairn::v1::TrialJobTemplate& t) {
  if (t.replicas().empty()) return absl::OkStatus();
  std::set<int> types;
  int total = 0;
  for (int i = 0; i < t.replicas_size(); ++i) {
    const cairn::v1::ReplicaGroup& g = t.replicas(i);
    if (absl::Status s = ValidateReplicaGroup(g, i); !s.ok()) return s;
    if (!types.insert(g.type()).second) {
      return Bad(absl::StrCat("job_template.replicas[", i, "].type"),
                 absl::StrCat(cairn::v1::ReplicaGroup::Type_Name(g.type()),
                              " appears twice; give each type one group"));
    }
    total += g.count();
  }
  if (types.count(cairn::v1::ReplicaGroup::MASTER) == 0) {
    return Bad("job_template.replicas",
               "has no MASTER group; exactly one MASTER with count 1 is "
               "required");
  }
  if (total > kMaxReplicasPerTrial) {
    return Bad("job_template.replicas",
               absl::StrCat(total, " replicas in all; at most ",
                            kMaxReplicasPerTrial, " per trial"));
  }
  if (t.gpus_per_trial() != 0) {
    return Bad("job_template.gpus_per_trial",
               absl::StrCat(t.gpus_per_trial(),
                            " with replicas; set replicas[].gpus_per_replica "
                            "instead"));
  }
  return absl::OkStatus();
}

// A path podman bind-mounts: absolute, and no ',' or newline (they would
// change --mount's meaning).
absl::Status CheckMountPath(const std::string& field, const std::string& p) {
  if (p.empty() || p[0] != '/' || p.find_first_of(",\n") != std::string::npos) {
    return Bad(field, absl::StrCat(Quote(p),
                                   " must be an absolute path without ',' "
                                   "or newline"));
  }
  return absl::OkStatus();
}

absl::Status ValidateContainer(const cairn::v1::ContainerSpec& c) {
  const std::string image_problem = api::ImageReferenceProblem(c.image());
  if (!image_problem.empty()) {
    return Bad("job_template.container.image",
               absl::StrCat(Quote(c.image()), " ", image_problem));
  }
  if (c.mounts_size() > kMaxContainerMounts) {
    return Bad("job_template.container.mounts",
               absl::StrCat(c.mounts_size(), " mounts; at most ",
                            kMaxContainerMounts));
  }
  for (const cairn::v1::ContainerSpec::Mount& m : c.mounts()) {
    absl::Status s = CheckMountPath("job_template.container.mounts.host_path",
                                    m.host_path());
    if (s.ok()) {
      s = CheckMountPath("job_template.container.mounts.container_path",
                         m.container_path());
    }
    if (!s.ok()) return s;
  }
  if (!(c.cpus() >= 0 && c.cpus() <= 4096)) {
    return Bad("job_template.container.cpus",
               absl::StrCat(c.cpus(), " must be in [0, 4096]"));
  }
  if (c.memory_bytes() < 0 || c.pids_limit() < 0) {
    return Bad(
        c.memory_bytes() < 0 ? "job_template.container.memory_bytes"
                             : "job_template.container.pids_limit",
        absl::StrCat(c.memory_bytes() < 0 ? c.memory_bytes() : c.pids_limit(),
                     " must be >= 0"));
  }
  return absl::OkStatus();
}

// The program: `command`, or a container image (whose ENTRYPOINT or
// container.command runs) with `command` empty.
absl::Status ValidateProgram(const cairn::v1::TrialJobTemplate& t) {
  if (t.has_container()) {
    if (t.command_size() > 0) {
      return Bad("job_template.command",
                 "must be empty with a container image; set "
                 "container.command (the ENTRYPOINT) and container.args");
    }
    return ValidateContainer(t.container());
  }
  if (t.command_size() == 0 || t.command(0).empty()) {
    return Bad("job_template.command",
               "is empty; name the training program to run");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobTemplateShape(const cairn::v1::StudySpec& spec) {
  if (!spec.has_job_template()) return absl::OkStatus();
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  if (absl::Status s = ValidateProgram(t); !s.ok()) return s;
  if (t.gpus_per_trial() < 0) {
    return Bad("job_template.gpus_per_trial",
               absl::StrCat(t.gpus_per_trial(), " must be >= 0"));
  }
  if (t.max_restarts() < 0) {
    return Bad("job_template.max_restarts",
               absl::StrCat(t.max_restarts(), " must be >= 0"));
  }
  if (t.has_max_running_time() && (t.max_running_time().seconds() < 0 ||
                                   t.max_running_time().nanos() < 0)) {
    return Bad(
        "job_template.max_running_time",
        absl::StrCat(t.max_running_time().seconds(), "s ",
                     t.max_running_time().nanos(), "ns must not be negative"));
  }
  for (const auto& [name, value] : t.env()) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return Bad("job_template.env", absl::StrCat("variable name ", Quote(name),
                                                  " must be non-empty and "
                                                  "without '='"));
    }
  }
  return ValidateReplicas(t);
}

}  // namespace cairn::tuner
