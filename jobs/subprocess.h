// Runs a short-lived program (a cluster's client tool, e.g. sbatch) with an
// explicit argv and environment, never through a shell, and captures what
// it prints.
#ifndef CAIRN_JOBS_SUBPROCESS_H_
#define CAIRN_JOBS_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

struct ProgramOutput {
  int exit_code = 0;  // 128 + signal when killed by a signal.
  std::string out;    // stdout.
  std::string err;    // stderr.
};

// Runs argv[0] (an absolute path) with `env` ("KEY=VALUE" strings) as its
// whole environment, stdin from /dev/null, none of the caller's other
// descriptors, and waits for it. FailedPrecondition if it cannot be started
// (the message names it). Output past 4 MiB per stream is dropped.
absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env);

// RunProgram as `user` (SwitchUser, jobs/job_user.h, in the child, working
// dir /), without PR_SET_NO_NEW_PRIVS: for a tool that needs its setuid
// helpers, such as rootless podman's newuidmap. The child exits 127 when
// it cannot switch.
absl::StatusOr<ProgramOutput> RunProgramAs(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& env,
                                           const JobUser& user);

// The absolute path of `name` found in the directories of `path` (a
// PATH-style list), or "" if none is executable.
std::string FindProgram(const std::string& name, const std::string& path);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_SUBPROCESS_H_
