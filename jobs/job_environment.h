// The environment every executor gives a job: a clean base, never cairnd's
// own environment, with the job's variables over it.
#ifndef CAIRN_JOBS_JOB_ENVIRONMENT_H_
#define CAIRN_JOBS_JOB_ENVIRONMENT_H_

#include <map>
#include <string>

#include "jobs/executor.h"
#include "jobs/job_user.h"

namespace cairn::jobs {

// Where jobs look for programs: the job user's PATH, not cairnd's.
inline constexpr char kJobPath[] = "/usr/local/bin:/usr/bin:/bin";

// PATH (kJobPath), USER and LOGNAME (`user`), LANG=C.UTF-8 and HOME (the
// user's home, else the job dir CAIRN_JOB_DIR when the user has none, as
// nobody, else "/"), then every variable of `spec.env` over them.
std::map<std::string, std::string> JobEnvironment(const JobUser& user,
                                                  const JobSpec& spec);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_ENVIRONMENT_H_
