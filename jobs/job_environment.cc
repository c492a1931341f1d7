// See job_environment.h.
#include "jobs/job_environment.h"

namespace cairn::jobs {

std::map<std::string, std::string> JobEnvironment(const JobUser& user,
                                                  const JobSpec& spec) {
  std::map<std::string, std::string> env = {{"PATH", kJobPath},
                                            {"USER", user.name},
                                            {"LOGNAME", user.name},
                                            {"LANG", "C.UTF-8"}};
  auto job_dir = spec.env.find("CAIRN_JOB_DIR");
  env["HOME"] = !user.home.empty()          ? user.home
                : job_dir != spec.env.end() ? job_dir->second
                                            : "/";
  for (const auto& [k, v] : spec.env) env[k] = v;
  return env;
}

}  // namespace cairn::jobs
