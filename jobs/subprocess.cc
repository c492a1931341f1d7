// RunProgram: fork/exec with two pipes, read with poll.
#include "jobs/subprocess.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cairn::jobs {
namespace {

constexpr size_t kMaxOutput = 4 << 20;

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child: `user` when given, stdin /dev/null, stdout and stderr the
// pipes, nothing else.
[[noreturn]] void ExecChild(int out_fd, int err_fd, char* const* argv,
                            char* const* envp, const JobUser* user) {
  if (user != nullptr && (SwitchUser(*user) != 0 || chdir("/") != 0)) {
    _exit(127);
  }
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 ||
      dup2(err_fd, 2) < 0) {
    _exit(127);
  }
  syscall(SYS_close_range, 3, ~0U, 0);
  execve(argv[0], argv, envp);
  _exit(127);
}

// Reads both pipes until both are closed.
void ReadBoth(int out_fd, int err_fd, ProgramOutput& result) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buf[8192];
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      if (sinks[i]->size() < kMaxOutput) sinks[i]->append(buf, n);
    }
  }
}

// Forks, switches to `user` when given, execs; both outputs captured.
absl::StatusOr<ProgramOutput> RunChild(const std::vector<std::string>& argv,
                                       const std::vector<std::string>& env,
                                       const JobUser* user) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError(
        "RunProgram: argv[0] must be an absolute path");
  }
  std::vector<char*> c_argv = CStrings(argv);
  std::vector<char*> c_env = CStrings(env);
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid == 0)
    ExecChild(out_pipe[1], err_pipe[1], c_argv.data(), c_env.data(), user);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  ProgramOutput result;
  ReadBoth(out_pipe[0], err_pipe[0], result);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code =
      WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  if (result.exit_code == 127 && result.out.empty() && result.err.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot run ", argv[0]));
  }
  return result;
}

}  // namespace

absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env) {
  return RunChild(argv, env, nullptr);
}

absl::StatusOr<ProgramOutput> RunProgramAs(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& env,
                                           const JobUser& user) {
  return RunChild(argv, env, &user);
}

std::string FindProgram(const std::string& name, const std::string& path) {
  for (absl::string_view d : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(d, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace cairn::jobs
