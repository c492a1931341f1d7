// Who a training job runs as. A cairnd running as root never runs a job as
// root: jobs run as --job-user (default "nobody") unless --allow-root-jobs.
// A cairnd that is not root cannot switch users: its jobs run as itself.
#ifndef CAIRN_JOBS_JOB_USER_H_
#define CAIRN_JOBS_JOB_USER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cairn::jobs {

// The identity of jobs, resolved once at start (getpwnam, getgrouplist) so
// that a forked child only makes system calls.
struct JobUser {
  std::string name;  // For messages and USER / LOGNAME.
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // Supplementary groups (as initgroups sets).
  std::string home;           // HOME: the user's home if it is a directory.
  // True when the child must switch to uid/gid/groups (cairnd is root and
  // the job user is not). False: jobs run as cairnd's own user.
  bool switch_user = false;
};

// The job user of a cairnd with these flags. As root: `name`'s uid, gid and
// groups (InvalidArgument naming --job-user for an unknown user or one with
// uid 0), or root itself with `allow_root_jobs`. Not root: cairnd's own user
// (`name` is ignored).
absl::StatusOr<JobUser> ResolveJobUser(const std::string& name,
                                       bool allow_root_jobs);

// The job user of a process that switches nobody: the current user.
JobUser CurrentUser();

// In a forked child: switches to `user` when user.switch_user (groups, gid,
// then uid, checked: never able to become root again). Only
// async-signal-safe calls. Returns 0, or the errno of the step that failed.
int SwitchUser(const JobUser& user);

// In a forked child: SwitchUser, then PR_SET_NO_NEW_PRIVS. Only
// async-signal-safe calls. Returns 0, or the errno of the step that failed.
int DropPrivileges(const JobUser& user);

// FailedPrecondition naming `flag` and --job-user unless `user` can reach
// (search) directory `dir`: checked in a child that drops to the user, so
// permissions and ACLs count exactly as they will for jobs.
absl::Status CheckUserCanReach(const JobUser& user, const std::string& dir,
                               const std::string& flag);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_USER_H_
