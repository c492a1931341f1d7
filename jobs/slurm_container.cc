// A replica's container on a Slurm node. See slurm_container.h.
#include "jobs/slurm_container.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "jobs/container_executor.h"
#include "jobs/job_files.h"
#include "jobs/job_user.h"
#include "jobs/subprocess.h"

namespace cairn::jobs {
namespace {

// podman's environment on the node: the task's own (HOME and USER say
// whose rootless store; XDG_RUNTIME_DIR where its run root is), never the
// job's variables.
std::vector<std::string> TaskEnv() {
  std::vector<std::string> env;
  for (const char* name :
       {"PATH", "HOME", "USER", "LOGNAME", "LANG", "XDG_RUNTIME_DIR"}) {
    if (const char* v = std::getenv(name); v != nullptr) {
      env.push_back(absl::StrCat(name, "=", v));
    }
  }
  return env;
}

void Podman(const std::string& runtime, std::vector<std::string> args) {
  args.insert(args.begin(), runtime);
  (void)RunProgram(args, TaskEnv());
}

// podman's --time: `grace` in whole seconds, rounded up.
std::string GraceFlag(absl::Duration grace) {
  return absl::StrCat(
      "--time=", absl::ToInt64Seconds(absl::Ceil(grace, absl::Seconds(1))));
}

// Starts `argv` (argv[0] a path) in a new session whose parent is init,
// its output to /dev/null, so that it outlives this task: srun SIGKILLs
// its tasks, and slurmstepd the batch program, soon after a SIGTERM, and
// conmon, which holds the container, escapes both.
void Detached(std::vector<std::string> argv) {
  std::vector<std::string> env = TaskEnv();
  std::vector<char*> c_argv, c_env;
  for (std::string& a : argv) c_argv.push_back(a.data());
  for (std::string& e : env) c_env.push_back(e.data());
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    if (fork() == 0) {
      const int null_fd = open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3 && null_fd >= 0; ++fd) dup2(null_fd, fd);
      execve(c_argv[0], c_argv.data(), c_env.data());
    }
    _exit(0);
  }
  if (pid > 0) waitpid(pid, nullptr, 0);
}

// Writes `text` to a new file `path` readable by this user only.
absl::Status WritePrivate(const std::string& path, const std::string& text) {
  unlink(path.c_str());
  absl::StatusOr<ScopedFd> fd =
      OpenJobFile(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!fd.ok()) return fd.status();
  if (write(fd->get(), text.data(), text.size()) !=
      static_cast<ssize_t>(text.size())) {
    return absl::FailedPreconditionError("cannot write " + path);
  }
  return absl::OkStatus();
}

// The runtime's absolute path on this node.
absl::StatusOr<std::string> NodeRuntime(const std::string& runtime) {
  const char* path = std::getenv("PATH");
  const std::string found =
      runtime.find('/') != std::string::npos
          ? (access(runtime.c_str(), X_OK) == 0 ? runtime : "")
          : FindProgram(runtime, path != nullptr ? path : "/usr/bin:/bin");
  if (found.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "container runtime '", runtime.substr(0, 200),
        "' not found on this node (install podman on every node: "
        "scripts/common.sh cairn_setup_podman, scripts/podman-user.sh)"));
  }
  return found;
}

}  // namespace

absl::StatusOr<std::string> SlurmContainerRuntime(const std::string& flag) {
  if (flag == "none") return "";
  if (flag.empty()) return "podman";
  const bool path = flag[0] == '/';
  bool ok = flag.size() < 1024;
  for (char c : flag) {
    ok = ok && (absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-' ||
                c == '+' || (path && c == '/'));
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--container-runtime: '", flag.substr(0, 200),
        "' must be a program name or an absolute path (found on the nodes)"));
  }
  return flag;
}

nlohmann::json ContainerJobJson(const ContainerJob& job) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const ContainerMount& m : job.mounts) {
    mounts.push_back({{"host_path", m.host_path},
                      {"container_path", m.container_path},
                      {"read_only", m.read_only}});
  }
  return {{"image", job.image},
          {"entrypoint", job.entrypoint},
          {"mounts", mounts},
          {"cpus", job.cpus},
          {"memory_bytes", job.memory_bytes},
          {"pids_limit", job.pids_limit},
          {"devices", job.devices},
          {"labels", job.labels}};
}

absl::StatusOr<ContainerJob> ParseContainerJob(const nlohmann::json& j) {
  ContainerJob job;
  try {
    job.image = j.at("image").get<std::string>();
    job.entrypoint = j.at("entrypoint").get<std::vector<std::string>>();
    for (const nlohmann::json& m : j.at("mounts")) {
      job.mounts.push_back({m.at("host_path").get<std::string>(),
                            m.at("container_path").get<std::string>(),
                            m.at("read_only").get<bool>()});
    }
    job.cpus = j.at("cpus").get<double>();
    job.memory_bytes = j.at("memory_bytes").get<int64_t>();
    job.pids_limit = j.at("pids_limit").get<int64_t>();
    job.devices = j.at("devices").get<std::vector<std::string>>();
    job.labels = j.at("labels").get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("group file: malformed container: ", e.what()));
  }
  return job;
}

absl::StatusOr<SlurmContainer> PrepareSlurmContainer(
    const ContainerOptions& options, ContainerJob job,
    const std::map<std::string, std::string>& env,
    const std::string& cuda_visible, const std::string& env_file,
    const std::string& slurm_job) {
  ContainerOptions opts = options;
  absl::StatusOr<std::string> runtime = NodeRuntime(options.runtime);
  if (!runtime.ok()) return runtime.status();
  opts.runtime = *runtime;
  // The hypertune file must exist to be bind-mounted.
  if (auto it = env.find("CLOUD_ML_HP_METRIC_FILE"); it != env.end()) {
    absl::StatusOr<ScopedFd> fd =
        OpenJobFile(it->second, O_WRONLY | O_CREAT, 0644);
    if (!fd.ok()) return fd.status();
  }
  job.labels["cairn.slurm_job"] = slurm_job;
  // The GPUs Slurm gave the task; a node without them runs none.
  (void)AddContainerGpus(cuda_visible, job);
  JobSpec spec;
  spec.env = env;
  if (!cuda_visible.empty()) spec.env["CUDA_VISIBLE_DEVICES"] = cuda_visible;
  spec.container = std::move(job);
  absl::StatusOr<std::string> text = ContainerEnvFile(spec);
  if (!text.ok()) return text.status();
  if (absl::Status s = WritePrivate(env_file, *text); !s.ok()) return s;
  SlurmContainer c;
  c.runtime = opts.runtime;
  c.name = ContainerName(opts.data_dir, *spec.container);
  c.env_file = env_file;
  Podman(c.runtime, {"rm", "--force", "--ignore", "--time=0", c.name});
  absl::StatusOr<std::vector<std::string>> argv =
      PodmanRunArgv(opts, CurrentUser(), spec, c.name, env_file);
  if (!argv.ok()) {
    unlink(env_file.c_str());
    return argv.status();
  }
  c.argv = *std::move(argv);
  return c;
}

void StopSlurmContainer(const SlurmContainer& container, absl::Duration grace) {
  Detached({container.runtime, "stop", "--ignore", GraceFlag(grace),
            container.name});
}

void CleanUpSlurmContainer(const SlurmContainer& container,
                           absl::Duration grace) {
  Podman(container.runtime,
         {"rm", "--force", "--ignore", GraceFlag(grace), container.name});
  unlink(container.env_file.c_str());
}

void RemoveSlurmJobContainers(const std::string& runtime,
                              const std::string& slurm_job,
                              absl::Duration grace, bool detached) {
  absl::StatusOr<std::string> path = NodeRuntime(runtime);
  if (!path.ok() || slurm_job.empty()) return;
  std::vector<std::string> args = {
      *path,      "rm",
      "--force",  GraceFlag(grace),
      "--filter", "label=cairn.slurm_job=" + slurm_job};
  if (detached) return Detached(std::move(args));
  (void)RunProgram(args, TaskEnv());
}

}  // namespace cairn::jobs
