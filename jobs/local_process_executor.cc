// LocalProcessExecutor: fork/exec in a new session as the job user, output
// to a log.
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "jobs/executor.h"
#include "jobs/job_environment.h"
#include "jobs/job_files.h"
#include "util/proc_stat.h"

namespace cairn::jobs {

std::string JobExit::ToString() const {
  const std::string how = signal != 0
                              ? absl::StrCat("killed by signal ", signal)
                              : absl::StrCat("exit code ", exit_code);
  return detail.empty() ? how : absl::StrCat(how, " (", detail, ")");
}

int64_t ProcessStartTicks(int64_t pid) {
  absl::StatusOr<util::ProcStat> stat = util::ReadProcStat(absl::StrCat(pid));
  return stat.ok() ? stat->start_ticks : 0;
}

namespace {

// JobEnvironment (job_environment.h) as "KEY=VALUE" strings for execve.
std::vector<std::string> JobEnvironmentStrings(const JobUser& user,
                                               const JobSpec& spec) {
  std::vector<std::string> out;
  for (const auto& [k, v] : JobEnvironment(user, spec)) {
    out.push_back(k + "=" + v);
  }
  return out;
}

// The paths execvp would try for `program`, searched in the job's PATH
// (execvpe would search cairnd's): computed before fork.
std::vector<std::string> ExecCandidates(const std::string& program,
                                        const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return {program};
  std::string path = kJobPath;
  for (const std::string& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  std::vector<std::string> out;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    out.push_back(absl::StrCat(dir.empty() ? "." : dir, "/", program));
  }
  return out;
}

// A null-terminated array of pointers into `strings` (which must outlive it).
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// What the child needs, all prepared before fork.
struct ChildPlan {
  pid_t parent = 0;
  int log_fd = -1;
  int err_fd = -1;
  const char* working_dir = "";
  const JobUser* user = nullptr;
  char** candidates = nullptr;  // Paths to try, null-terminated.
  char** argv = nullptr;
  char** envp = nullptr;
};

// Reports `err` to the parent and exits 127.
[[noreturn]] void ChildFail(int err_fd, int err) {
  ssize_t ignored = write(err_fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

// The child after fork: only async-signal-safe calls. A new session and
// process group, the job user with no new privileges, then exec; or writes
// errno to plan.err_fd and exits 127.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  setsid();
  const int drop_err = DropPrivileges(*plan.user);
  if (drop_err != 0) ChildFail(plan.err_fd, drop_err);
  // After the credentials change, which clears the death signal.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);  // Should cairnd ignore it: exec keeps SIG_IGN.
  dup2(plan.log_fd, 1);
  dup2(plan.log_fd, 2);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  // No descriptor of cairnd's (its store, its sockets) reaches the job.
  syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  if (plan.working_dir[0] != '\0' && chdir(plan.working_dir) != 0) {
    ChildFail(plan.err_fd, errno);
  }
  int err = ENOENT;
  for (char** c = plan.candidates; *c != nullptr; ++c) {
    execve(*c, plan.argv, plan.envp);
    // As execvp: remember a permission error, go on past missing files.
    if (errno != ENOENT && errno != ENOTDIR) err = errno;
  }
  ChildFail(plan.err_fd, err);
}

// The parent after fork: waits for the exec (the pipe's write end closes
// on success) and reports the child's exec error if it sent one.
absl::StatusOr<JobHandle> AwaitExec(pid_t pid, int err_read_fd,
                                    const std::string& program,
                                    const JobUser& user) {
  int child_err = 0;
  const ssize_t n = read(err_read_fd, &child_err, sizeof(child_err));
  close(err_read_fd);
  if (n == sizeof(child_err)) {
    waitpid(pid, nullptr, 0);
    return absl::FailedPreconditionError(
        absl::StrCat("command: cannot execute '", program, "' as user '",
                     user.name, "': ", strerror(child_err)));
  }
  JobHandle handle;
  handle.id = pid;
  handle.pid = pid;
  handle.start_ticks = ProcessStartTicks(pid);
  return handle;
}

class LocalProcessExecutor : public Executor {
 public:
  LocalProcessExecutor(util::Clock* clock, JobUser user)
      : clock_(clock), user_(std::move(user)) {}

  absl::StatusOr<JobHandle> Start(const JobSpec& spec) override {
    if (spec.argv.empty()) {
      return absl::InvalidArgumentError("command: must not be empty");
    }
    // Everything the child needs is prepared before fork: after it, only
    // async-signal-safe calls.
    std::vector<std::string> env_strings = JobEnvironmentStrings(user_, spec);
    std::vector<char*> envp = CStrings(env_strings);
    std::vector<std::string> args = spec.argv;
    std::vector<char*> argv = CStrings(args);
    std::vector<std::string> paths = ExecCandidates(spec.argv[0], env_strings);
    std::vector<char*> candidates = CStrings(paths);
    // The job writes to the log through this descriptor: opened by cairnd,
    // never through a link the job left in its place.
    absl::StatusOr<ScopedFd> log =
        OpenJobFile(spec.log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (!log.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("job log: ", log.status().message()));
    }
    // A pipe whose write end closes on a successful exec reports exec errors.
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      return absl::InternalError("pipe2 failed");
    }
    ChildPlan plan{
        getpid(), log->get(),        err_pipe[1], spec.working_dir.c_str(),
        &user_,   candidates.data(), argv.data(), envp.data()};
    const pid_t pid = fork();
    if (pid == 0) RunChild(plan);
    close(err_pipe[1]);
    if (pid < 0) {
      close(err_pipe[0]);
      return absl::ResourceExhaustedError("fork failed");
    }
    // The child's setsid made it the leader of its own process group.
    return AwaitExec(pid, err_pipe[0], spec.argv[0], user_);
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
  util::Clock* const clock_;
  const JobUser user_;
  absl::Mutex mu_;
  // pid -> when SIGKILL follows the SIGTERM. Protected by mu_.
  std::map<int64_t, absl::Time> kill_deadlines_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<Executor> NewLocalProcessExecutor(util::Clock* clock,
                                                  const JobUser& user) {
  return std::make_unique<LocalProcessExecutor>(clock, user);
}

}  // namespace cairn::jobs
