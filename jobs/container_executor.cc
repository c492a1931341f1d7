// ContainerExecutor: container jobs as podman clients, other jobs as
// processes. See container_executor.h.
#include "jobs/container_executor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "jobs/image_store.h"
#include "jobs/job_environment.h"
#include "jobs/job_files.h"
#include "jobs/subprocess.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

// podman's own environment: no variable of cairnd's or of the job.
const std::vector<std::string>& RuntimeEnv() {
  static const auto* env = new std::vector<std::string>{
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "LANG=C.UTF-8"};
  return *env;
}

// Runs the runtime with `args`; the output, or FailedPrecondition naming
// the command and its first error line.
absl::StatusOr<ProgramOutput> Runtime(const std::string& runtime,
                                      std::vector<std::string> args) {
  args.insert(args.begin(), runtime);
  return RunProgram(args, RuntimeEnv());
}

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.substr(0, 300);
}

// Writes `content` to a fresh file `path` (0600, never through a link).
absl::Status WriteEnvFile(const std::string& path, const std::string& content) {
  unlink(path.c_str());
  absl::StatusOr<ScopedFd> fd =
      OpenJobFile(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!fd.ok()) return fd.status();
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n =
        write(fd->get(), content.data() + done, content.size() - done);
    if (n <= 0) return absl::InternalError("writing " + path + " failed");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// A container job this executor started.
struct Tracked {
  std::string name;
  std::string dir;  // The client's working dir, holding its env file.
  int64_t memory_bytes = 0;
  std::optional<absl::Time> kill_at;  // Set by Terminate.
  bool killed = false;                // podman kill sent.
};

class ContainerExecutor : public Executor {
 public:
  ContainerExecutor(ContainerOptions options, JobUser user,
                    std::unique_ptr<Executor> processes, util::Clock* clock)
      : options_(std::move(options)),
        user_(std::move(user)),
        processes_(std::move(processes)),
        clients_(NewLocalProcessExecutor(clock, CurrentUser())),
        clock_(clock) {}

  absl::StatusOr<JobHandle> Start(const JobSpec& spec) override {
    if (!spec.container) return processes_->Start(spec);
    const std::string name = ContainerName(options_.data_dir, *spec.container);
    if (absl::Status s = CheckImage(spec.container->image); !s.ok()) return s;
    if (absl::Status s = PrepareMetricFile(spec); !s.ok()) return s;
    // The client's own dir: its env file, and conmon's "oom" mark.
    const fs::path dir = fs::path(options_.state_dir) / name;
    const std::string env_file = (dir / "env").string();
    absl::StatusOr<std::string> env = ContainerEnvFile(spec);
    if (!env.ok()) return env.status();
    std::error_code ec;
    fs::create_directories(options_.state_dir, ec);
    chmod(options_.state_dir.c_str(), 0700);
    fs::remove_all(dir, ec);
    if (!fs::create_directory(dir, ec)) {
      return absl::FailedPreconditionError("cannot create " + dir.string());
    }
    if (absl::Status s = WriteEnvFile(env_file, *env); !s.ok()) return s;
    JobSpec with_gpus = spec;
    AddGpuDevices(with_gpus);
    absl::StatusOr<std::vector<std::string>> argv =
        PodmanRunArgv(options_, user_, with_gpus, name, env_file);
    if (!argv.ok()) {
      fs::remove_all(dir, ec);
      return argv.status();
    }
    JobSpec client;
    client.log_path = spec.log_path;
    client.working_dir = dir.string();
    client.argv = *std::move(argv);
    absl::StatusOr<JobHandle> handle = clients_->Start(client);
    if (!handle.ok()) {
      fs::remove_all(dir, ec);
      return handle.status();
    }
    absl::MutexLock lock(&mu_);
    tracked_[handle->id] =
        Tracked{name, dir.string(), spec.container->memory_bytes, {}, false};
    return handle;
  }

  std::optional<JobExit> Poll(const JobHandle& job) override {
    std::optional<Tracked> t = Find(job.id);
    if (!t) return processes_->Poll(job);
    if (t->kill_at && !t->killed && clock_->Now() >= *t->kill_at) {
      // The client's SIGKILL would not reach the container (conmon is
      // detached): kill the container itself.
      (void)Runtime(options_.runtime, {"kill", "--signal=KILL", t->name});
      absl::MutexLock lock(&mu_);
      tracked_[job.id].killed = true;
    }
    std::optional<JobExit> exit = clients_->Poll(job);
    if (!exit) return std::nullopt;
    Finish(*t, *exit);
    absl::MutexLock lock(&mu_);
    tracked_.erase(job.id);
    return exit;
  }

  void Terminate(const JobHandle& job, absl::Duration grace) override {
    if (!Find(job.id)) return processes_->Terminate(job, grace);
    // podman forwards the client's SIGTERM to the container (sig-proxy).
    clients_->Terminate(job, grace);
    absl::MutexLock lock(&mu_);
    Tracked& t = tracked_[job.id];
    if (!t.kill_at) t.kill_at = clock_->Now() + grace;
  }

  bool KillOrphan(int64_t pid, int64_t start_ticks) override {
    // Orphan containers went at construction; this ends orphan processes.
    return processes_->KillOrphan(pid, start_ticks);
  }

 private:
  std::optional<Tracked> Find(int64_t id) {
    absl::MutexLock lock(&mu_);
    auto it = tracked_.find(id);
    if (it == tracked_.end()) return std::nullopt;
    return it->second;
  }

  // Fails fast, naming the image, when it is not in the local store and
  // podman may not pull it. (PodmanRunArgv refuses a bad reference.)
  absl::Status CheckImage(const std::string& image) {
    if (options_.pull != "never") return absl::OkStatus();
    absl::StatusOr<bool> found =
        ImageInStore(options_.runtime, image, RuntimeEnv(), CurrentUser());
    if (!found.ok()) return found.status();
    if (*found) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "container image '", image,
        "' is not in the local image store (cairnd --image-pull=never): "
        "build or load it on this machine first"));
  }

  // Exactly the job's GPUs (CUDA_VISIBLE_DEVICES) as devices; on a machine
  // without device nodes (cairnd --gpus N in tests) none, warned once.
  void AddGpuDevices(JobSpec& spec) {
    auto it = spec.env.find("CUDA_VISIBLE_DEVICES");
    if (it == spec.env.end()) return;
    if (AddContainerGpus(it->second, *spec.container)) return;
    absl::MutexLock lock(&mu_);
    if (!warned_no_gpu_nodes_) {
      spdlog::warn(
          "cairnd: containers get GPUs but this machine has no "
          "/dev/nvidia* nodes and no CDI spec: they start without "
          "GPU devices");
    }
    warned_no_gpu_nodes_ = true;
  }

  // The metric file must exist, owned by the job user, to be bind-mounted.
  absl::Status PrepareMetricFile(const JobSpec& spec) {
    auto it = spec.env.find("CLOUD_ML_HP_METRIC_FILE");
    if (it == spec.env.end()) return absl::OkStatus();
    absl::StatusOr<ScopedFd> fd =
        OpenJobFile(it->second, O_WRONLY | O_CREAT, 0644);
    if (!fd.ok()) return fd.status();
    if (user_.switch_user && fchown(fd->get(), user_.uid, user_.gid) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot give ", it->second, " to the job user"));
    }
    return absl::OkStatus();
  }

  // After the client's exit: no container and no env file stay behind, and
  // the exit says what the runtime knows.
  void Finish(const Tracked& t, JobExit& exit) {
    std::error_code ec;
    // conmon marks an OOM kill with a file "oom" in its working dir.
    const bool oom_mark = fs::exists(fs::path(t.dir) / "oom", ec);
    fs::remove_all(t.dir, ec);
    if (exit.signal != 0 || exit.exit_code == 125 || t.killed) {
      (void)Runtime(options_.runtime,
                    {"rm", "--force", "--ignore", "--time=0", t.name});
    }
    const bool killed_at_limit = exit.signal == 0 && exit.exit_code == 137 &&
                                 t.memory_bytes > 0 && !t.kill_at;
    if (oom_mark || killed_at_limit) {
      exit.detail = absl::StrCat(
          "out of memory: killed at the container's memory limit",
          t.memory_bytes > 0 ? absl::StrCat(" of ", t.memory_bytes, " bytes")
                             : "");
    } else if (exit.signal == 0 && exit.exit_code == 125) {
      exit.detail = "the container runtime failed; see the job log";
    }
  }

  const ContainerOptions options_;
  const JobUser user_;
  const std::unique_ptr<Executor> processes_;
  // Runs the podman clients as cairnd's own user.
  const std::unique_ptr<Executor> clients_;
  util::Clock* const clock_;
  absl::Mutex mu_;
  // Container jobs by handle id. Protected by mu_.
  std::map<int64_t, Tracked> tracked_ ABSL_GUARDED_BY(mu_);
  bool warned_no_gpu_nodes_ ABSL_GUARDED_BY(mu_) = false;
};

// Removes the containers an earlier cairnd on `options.data_dir` left.
absl::Status RemoveOrphans(const ContainerOptions& options) {
  absl::StatusOr<ProgramOutput> ps =
      Runtime(options.runtime, {"ps", "--all", "--quiet", "--filter",
                                "label=cairn.data_dir=" + options.data_dir});
  if (!ps.ok()) return ps.status();
  if (ps->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--container-runtime ", options.runtime,
        ": cannot list containers (fix the runtime, or start cairnd with "
        "--container-runtime=none): ",
        FirstLine(ps->err)));
  }
  std::vector<std::string> ids =
      absl::StrSplit(ps->out, '\n', absl::SkipWhitespace());
  if (ids.empty()) return absl::OkStatus();
  spdlog::warn(
      "cairnd: removing {} container(s) an earlier cairnd left "
      "running; their attempts restart",
      ids.size());
  std::vector<std::string> rm = {
      "rm", "--force", "--ignore",
      absl::StrCat("--time=", absl::ToInt64Seconds(options.grace_period))};
  rm.insert(rm.end(), ids.begin(), ids.end());
  return Runtime(options.runtime, rm).status();
}

}  // namespace

absl::StatusOr<std::string> FindContainerRuntime(const std::string& flag) {
  if (flag == "none") return "";
  if (flag.find('/') == std::string::npos) {
    return FindProgram(flag.empty() ? "podman" : flag,
                       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin");
  }
  struct stat st;
  if (stat(flag.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      access(flag.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--container-runtime: '", flag.substr(0, 200),
                     "' is not an executable file"));
  }
  return fs::absolute(flag).string();
}

absl::StatusOr<std::unique_ptr<Executor>> NewContainerExecutor(
    const ContainerOptions& options, const JobUser& user,
    std::unique_ptr<Executor> processes, util::Clock* clock) {
  // No state dir: no container ever ran on this data dir (Start makes it
  // before the first), so there is nothing to look for.
  std::error_code ec;
  if (fs::exists(options.state_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(options.state_dir, ec)) {
      fs::remove_all(entry.path(), ec);  // Left by an earlier cairnd.
    }
    if (absl::Status s = RemoveOrphans(options); !s.ok()) return s;
  }
  return std::make_unique<ContainerExecutor>(options, user,
                                             std::move(processes), clock);
}

}  // namespace cairn::jobs
