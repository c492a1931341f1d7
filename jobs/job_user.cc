// Resolving the job user and dropping to it. See job_user.h.
#include "jobs/job_user.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace cairn::jobs {
namespace {

// The home directory to give jobs: `dir` if it is a directory, else "".
std::string UsableHome(const char* dir) {
  struct stat st;
  if (dir == nullptr || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  return dir;
}

// The groups initgroups(3) would give `pw`.
std::vector<gid_t> GroupsOf(const struct passwd& pw) {
  int n = 16;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n) + 16);
    n = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

JobUser FromPasswd(const struct passwd& pw) {
  JobUser user;
  user.name = pw.pw_name;
  user.uid = pw.pw_uid;
  user.gid = pw.pw_gid;
  user.groups = GroupsOf(pw);
  user.home = UsableHome(pw.pw_dir);
  return user;
}

}  // namespace

JobUser CurrentUser() {
  const uid_t uid = geteuid();
  struct passwd pw_buf;
  struct passwd* pw = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw_buf, buf.data(), buf.size(), &pw) == 0 &&
      pw != nullptr) {
    JobUser user = FromPasswd(*pw);
    user.gid = getegid();
    return user;
  }
  JobUser user;
  user.name = absl::StrCat("uid ", uid);
  user.uid = uid;
  user.gid = getegid();
  user.home = UsableHome(getenv("HOME"));
  return user;
}

absl::StatusOr<JobUser> ResolveJobUser(const std::string& name,
                                       bool allow_root_jobs) {
  if (geteuid() != 0 || allow_root_jobs) return CurrentUser();
  struct passwd pw_buf;
  struct passwd* pw = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(name.c_str(), &pw_buf, buf.data(), buf.size(), &pw) != 0 ||
      pw == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--job-user: no user '", name.substr(0, 64),
                     "' on this machine; name an unprivileged user for jobs"));
  }
  if (pw->pw_uid == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--job-user: '", name.substr(0, 64),
        "' has uid 0; jobs never run as root unless --allow-root-jobs"));
  }
  JobUser user = FromPasswd(*pw);
  user.switch_user = true;
  return user;
}

int SwitchUser(const JobUser& user) {
  if (user.switch_user) {
    // Raw system calls: they change only this (single-threaded) child, and
    // are async-signal-safe whatever the C library does for threads.
    if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0 ||
        syscall(SYS_setresgid, user.gid, user.gid, user.gid) != 0 ||
        syscall(SYS_setresuid, user.uid, user.uid, user.uid) != 0) {
      return errno;
    }
    if (getuid() != user.uid || geteuid() != user.uid ||
        syscall(SYS_setresuid, 0, 0, 0) == 0) {
      return EPERM;  // Still (or again) able to be root: never exec.
    }
  }
  return 0;
}

int DropPrivileges(const JobUser& user) {
  if (const int err = SwitchUser(user); err != 0) return err;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return 0;
}

absl::Status CheckUserCanReach(const JobUser& user, const std::string& dir,
                               const std::string& flag) {
  int err = 0;
  if (!user.switch_user) {
    if (access(dir.c_str(), X_OK) != 0) err = errno;
  } else {
    const pid_t pid = fork();
    if (pid == 0) {
      int e = DropPrivileges(user);
      if (e == 0 && access(dir.c_str(), X_OK) != 0) e = errno;
      _exit(e);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
      return absl::InternalError(
          absl::StrCat(flag, ": cannot check access as the job user"));
    }
    err = WEXITSTATUS(status);
  }
  if (err == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      flag, ": the job user '", user.name, "' (uid ", user.uid,
      ") cannot reach '", dir, "': ", strerror(err),
      "; make every directory above it searchable by that user (chmod o+x), "
      "choose another ",
      flag, ", or set --job-user"));
}

}  // namespace cairn::jobs
