// LocalProcessExecutor: fork/exec in a new process group, output to a log.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "jobs/executor.h"

extern char** environ;

namespace cairn::jobs {

std::string JobExit::ToString() const {
  if (signal != 0) return absl::StrCat("killed by signal ", signal);
  return absl::StrCat("exit code ", exit_code);
}

int64_t ProcessStartTicks(int64_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  // Field 22 (starttime); the command (field 2) may hold spaces, so count
  // from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return 0;
  }
  return std::stoll(field);
}

namespace {

// cairnd's environment with `overrides` replacing or adding variables, as
// "KEY=VALUE" strings.
std::vector<std::string> MergedEnvironment(
    const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    if (overrides.count(kv.substr(0, kv.find('='))) == 0) {
      env.push_back(std::move(kv));
    }
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

// A null-terminated array of pointers into `strings` (which must outlive it).
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The child after fork: only async-signal-safe calls. Execs the job, or
// writes errno to `err_fd` and exits 127.
[[noreturn]] void RunChild(pid_t parent, int log_fd, int err_fd,
                           const char* working_dir, char** argv, char** envp) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(log_fd, 1);
  dup2(log_fd, 2);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  int err = 0;
  if (working_dir[0] != '\0' && chdir(working_dir) != 0) {
    err = errno;
  } else {
    execvpe(argv[0], argv, envp);
    err = errno;
  }
  ssize_t ignored = write(err_fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

// The parent after fork: waits for the exec (the pipe's write end closes
// on success) and reports the child's exec error if it sent one.
absl::StatusOr<JobHandle> AwaitExec(pid_t pid, int err_read_fd,
                                    const std::string& program) {
  int child_err = 0;
  const ssize_t n = read(err_read_fd, &child_err, sizeof(child_err));
  close(err_read_fd);
  if (n == sizeof(child_err)) {
    waitpid(pid, nullptr, 0);
    return absl::FailedPreconditionError(absl::StrCat(
        "command: cannot execute '", program, "': ", strerror(child_err)));
  }
  JobHandle handle;
  handle.id = pid;
  handle.pid = pid;
  handle.start_ticks = ProcessStartTicks(pid);
  return handle;
}

class LocalProcessExecutor : public Executor {
 public:
  explicit LocalProcessExecutor(Clock* clock) : clock_(clock) {}

  absl::StatusOr<JobHandle> Start(const JobSpec& spec) override {
    if (spec.argv.empty()) {
      return absl::InvalidArgumentError("command: must not be empty");
    }
    // Everything the child needs is prepared before fork: after it, only
    // async-signal-safe calls.
    std::vector<std::string> env_strings = MergedEnvironment(spec.env);
    std::vector<char*> envp = CStrings(env_strings);
    std::vector<std::string> args = spec.argv;
    std::vector<char*> argv = CStrings(args);
    const int log_fd = open(spec.log_path.c_str(),
                            O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot open job log '", spec.log_path, "': ", strerror(errno)));
    }
    // A pipe whose write end closes on a successful exec reports exec errors.
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      close(log_fd);
      return absl::InternalError("pipe2 failed");
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
      RunChild(parent, log_fd, err_pipe[1], spec.working_dir.c_str(),
               argv.data(), envp.data());
    }
    close(log_fd);
    close(err_pipe[1]);
    if (pid < 0) {
      close(err_pipe[0]);
      return absl::ResourceExhaustedError("fork failed");
    }
    setpgid(pid, pid);
    return AwaitExec(pid, err_pipe[0], spec.argv[0]);
  }

  std::optional<JobExit> Poll(const JobHandle& job) override {
    int status = 0;
    const pid_t r = waitpid(static_cast<pid_t>(job.pid), &status, WNOHANG);
    if (r == 0) {
      absl::MutexLock lock(&mu_);
      auto it = kill_deadlines_.find(job.pid);
      if (it != kill_deadlines_.end() && clock_->Now() >= it->second) {
        kill(-static_cast<pid_t>(job.pid), SIGKILL);
      }
      return std::nullopt;
    }
    JobExit exit;
    if (r < 0) {
      exit.exit_code = -1;  // Not our child any more (already reaped).
    } else if (WIFSIGNALED(status)) {
      exit.signal = WTERMSIG(status);
    } else {
      exit.exit_code = WEXITSTATUS(status);
    }
    // Whatever the leader left behind in its group goes too.
    kill(-static_cast<pid_t>(job.pid), SIGKILL);
    absl::MutexLock lock(&mu_);
    kill_deadlines_.erase(job.pid);
    return exit;
  }

  void Terminate(const JobHandle& job, absl::Duration grace) override {
    kill(-static_cast<pid_t>(job.pid), SIGTERM);
    absl::MutexLock lock(&mu_);
    kill_deadlines_.emplace(job.pid, clock_->Now() + grace);
  }

  bool KillOrphan(int64_t pid, int64_t start_ticks) override {
    if (pid <= 0 || start_ticks == 0) return false;
    if (ProcessStartTicks(pid) != start_ticks) return false;
    kill(-static_cast<pid_t>(pid), SIGKILL);
    kill(static_cast<pid_t>(pid), SIGKILL);
    for (int i = 0; i < 200 && ProcessStartTicks(pid) == start_ticks; ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

 private:
  Clock* const clock_;
  absl::Mutex mu_;
  // pid -> when SIGKILL follows the SIGTERM. Protected by mu_.
  std::map<int64_t, absl::Time> kill_deadlines_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<Executor> NewLocalProcessExecutor(Clock* clock) {
  return std::make_unique<LocalProcessExecutor>(clock);
}

}  // namespace cairn::jobs
