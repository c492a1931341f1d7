// Job dirs under the allowed roots, and the checks of job templates that
// depend on this cairnd.
#include "jobs/job_template.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jobs/job_command.h"
#include "jobs/job_files.h"
#include "jobs/tf_config.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

// At most the first 64 characters of user input in a message.
std::string Clip(const std::string& s) {
  return s.size() <= 64 ? s : s.substr(0, 64) + "...";
}

fs::path RealPrefixPath(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? p.lexically_normal() : out;
}

// True if `p` lies strictly inside `root` (both resolved).
bool StrictlyInside(const fs::path& p, const fs::path& root) {
  const fs::path rel = p.lexically_relative(root);
  return !rel.empty() && rel != "." && *rel.begin() != "..";
}

// The field a user wrote the job dir in: an AI Platform job's
// trainingInput.jobDir (config or --job-dir), else the study config's
// job_template.job_dir.
std::string JobDirField(const cairn::v1::TrialJobTemplate& t) {
  return t.ai_platform_job_id().empty() ? "job_template.job_dir"
                                        : "trainingInput.jobDir";
}

// Resolves a template's job_dir (default: jobs_root/default_name) to the
// real path of its longest existing prefix; InvalidArgument unless it lies
// inside one of the roots.
absl::StatusOr<fs::path> ResolveInRoots(
    const JobRoots& roots, const std::string& job_dir,
    const std::string& default_name,
    const std::string& field = "job_template.job_dir") {
  const fs::path jobs_root = RealPrefixPath(roots.jobs_root);
  const fs::path p = RealPrefixPath(job_dir.empty() ? jobs_root / default_name
                                                    : jobs_root / job_dir);
  std::vector<std::string> allowed = {jobs_root.string()};
  if (StrictlyInside(p, jobs_root)) return p;
  for (const std::string& root : roots.allowed_job_dirs) {
    const fs::path r = RealPrefixPath(root);
    if (StrictlyInside(p, r)) return p;
    allowed.push_back(r.string());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": '", Clip(job_dir), "' resolves to '", Clip(p.string()),
      "', outside the jobs root and the allowed job dirs (",
      Clip(absl::StrJoin(allowed, ", ")),
      "); the admin can allow more with --allowed-job-dirs"));
}

absl::Status ValidateEnv(const cairn::v1::TrialJobTemplate& t) {
  for (const auto& [name, value] : t.env()) {
    const std::string why = ReservedVariableReason(name);
    if (!why.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job_template.env: may not set ", Clip(name), ": ", why));
    }
  }
  return absl::OkStatus();
}

// A container job needs a runtime, and may mount only what lies in the
// roots its job dirs may (a bind mount would pass directories the job user
// cannot search).
absl::Status ValidateContainer(const JobRoots& roots,
                               const std::string& container_runtime,
                               const cairn::v1::TrialJobTemplate& t) {
  if (!t.has_container()) return absl::OkStatus();
  if (container_runtime.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job_template.container.image: '", Clip(t.container().image()),
        "' needs a container runtime and this cairnd has none (podman not "
        "on PATH: install it with scripts/common.sh, or start cairnd with "
        "--container-runtime PATH)"));
  }
  std::vector<const cairn::v1::ContainerSpec*> specs = {&t.container()};
  for (const cairn::v1::ReplicaGroup& g : t.replicas()) {
    specs.push_back(&g.container());
  }
  const int64_t memory = PhysicalMemoryBytes();
  for (const cairn::v1::ContainerSpec* c : specs) {
    for (const cairn::v1::ContainerSpec::Mount& m : c->mounts()) {
      absl::StatusOr<fs::path> host = ResolveInRoots(
          roots, m.host_path(), "", "job_template.container.mounts.host_path");
      if (!host.ok()) return host.status();
    }
    // Could never start: refused now rather than failing every attempt.
    if (memory > 0 && c->memory_bytes() > memory) {
      return absl::InvalidArgumentError(absl::StrCat(
          "job_template.container.memory_bytes: ", c->memory_bytes(),
          " (a machine type's memory?) exceeds the ", memory,
          " bytes of this machine"));
    }
  }
  return absl::OkStatus();
}

// Makes the job user the owner of directory `dir` (opened without following
// a link at its name).
absl::Status GiveTo(const fs::path& dir, const JobUser& owner) {
  ScopedFd fd(
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0 || fchown(fd.get(), owner.uid, owner.gid) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot give job dir '", dir.string(), "' to user '",
                     owner.name, "': ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? int64_t{pages} * page : 0;
}

absl::Status ValidateJobTemplate(const JobRoots& roots, int gpus,
                                 const cairn::v1::StudySpec& spec,
                                 const std::string& container_runtime) {
  if (!spec.has_job_template()) return absl::OkStatus();
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  absl::Status env = ValidateEnv(t);
  if (!env.ok()) return env;
  absl::Status container = ValidateContainer(roots, container_runtime, t);
  if (!container.ok()) return container;
  absl::StatusOr<fs::path> dir =
      ResolveInRoots(roots, t.job_dir(), "x", JobDirField(t));
  if (!dir.ok()) return dir.status();
  if (t.gpus_per_trial() > gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_template.gpus_per_trial: ", t.gpus_per_trial(), " exceeds the ",
        gpus, " GPU(s) this cairnd schedules (--gpus)"));
  }
  if (TrialGpuCount(t) > gpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_template.replicas: a trial's replicas need ", TrialGpuCount(t),
        " GPU(s) in all (count * gpus_per_replica), more than the ", gpus,
        " GPU(s) this cairnd schedules (--gpus)"));
  }
  return absl::OkStatus();
}

namespace {

// AI Platform's layout for a job's study: JOB_DIR/TRIAL_ID, and JOB_DIR
// itself for a plain training job (no parameters: its one trial); Cairn's
// own studies: <dir>/trial-ID.
fs::path TrialDirIn(const fs::path& study_dir, const cairn::v1::StudySpec& spec,
                    int64_t trial_id) {
  if (spec.job_template().ai_platform_job_id().empty()) {
    return study_dir / absl::StrCat("trial-", trial_id);
  }
  if (spec.parameters_size() == 0) return study_dir;
  return study_dir / absl::StrCat(trial_id);
}

}  // namespace

absl::StatusOr<fs::path> CreateTrialJobDir(const JobRoots& roots,
                                           const cairn::v1::StudySpec& spec,
                                           int64_t study_id, int64_t trial_id,
                                           const JobUser& owner) {
  absl::StatusOr<fs::path> study_dir = ResolveInRoots(
      roots, spec.job_template().job_dir(), absl::StrCat("study-", study_id),
      JobDirField(spec.job_template()));
  if (!study_dir.ok()) {
    return absl::FailedPreconditionError(study_dir.status().message());
  }
  const fs::path dir = TrialDirIn(*study_dir, spec, trial_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create job dir '", dir.string(), "': ", ec.message()));
  }
  if (owner.switch_user) {
    absl::Status given = GiveTo(dir, owner);
    if (!given.ok()) return given;
  }
  return dir;
}

}  // namespace cairn::jobs
