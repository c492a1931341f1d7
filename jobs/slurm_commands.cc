// Slurm command lines and output. See slurm_commands.h.
#include "jobs/slurm_commands.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "jobs/job_environment.h"

namespace cairn::jobs {
namespace {

// Whole minutes, rounded up (sbatch --time=MINUTES).
int64_t Minutes(absl::Duration d) {
  return static_cast<int64_t>(std::ceil(absl::ToDoubleMinutes(d)));
}

JobExit Killed(int signal, const std::string& detail) {
  JobExit exit;
  exit.signal = signal;
  exit.detail = detail;
  return exit;
}

// sbatch's argv up to the script: the settings of `spec` for a job of
// `tasks` tasks; `gpu_arg` ("" for none) asks for its GPUs.
std::vector<std::string> SbatchOptions(const std::string& sbatch,
                                       const SlurmOptions& options,
                                       const JobUser& user, const JobSpec& spec,
                                       int tasks, const std::string& gpu_arg) {
  std::vector<std::string> argv = {
      sbatch,
      "--parsable",
      absl::StrCat("--job-name=", spec.name.empty() ? "cairn" : spec.name),
      absl::StrCat("--output=", spec.log_path),
      "--open-mode=append",
      "--requeue",
      "--export=ALL",
      absl::StrCat("--ntasks=", tasks)};
  if (tasks > 1) argv.push_back("--spread-job");
  if (!spec.working_dir.empty()) {
    argv.push_back(absl::StrCat("--chdir=", spec.working_dir));
  }
  if (!gpu_arg.empty()) argv.push_back(gpu_arg);
  if (spec.time_limit != absl::InfiniteDuration()) {
    argv.push_back(absl::StrCat("--time=", Minutes(spec.time_limit)));
  }
  const int64_t grace = absl::ToInt64Seconds(options.grace_period);
  if (grace > 0) argv.push_back(absl::StrCat("--signal=B:TERM@", grace));
  if (!options.partition.empty()) {
    argv.push_back(absl::StrCat("--partition=", options.partition));
  }
  if (!options.account.empty()) {
    argv.push_back(absl::StrCat("--account=", options.account));
  }
  if (user.switch_user) {
    argv.push_back(absl::StrCat("--uid=", user.uid));
    argv.push_back(absl::StrCat("--gid=", user.gid));
  }
  for (const std::string& a : options.extra_args) argv.push_back(a);
  return argv;
}

}  // namespace

std::string SlurmReservedVariableReason(absl::string_view name) {
  if (absl::StartsWith(name, "SBATCH_") || absl::StartsWith(name, "SLURM_")) {
    return "sbatch reads SBATCH_* and SLURM_* as its own options";
  }
  return "";
}

std::vector<std::string> SbatchArgv(const std::string& sbatch,
                                    const SlurmOptions& options,
                                    const JobUser& user, const JobSpec& spec,
                                    const std::string& script) {
  std::vector<std::string> argv = SbatchOptions(
      sbatch, options, user, spec, 1,
      spec.gpus > 0 ? absl::StrCat("--gres=gpu:", spec.gpus) : "");
  argv.push_back(script);
  for (const std::string& a : spec.argv) argv.push_back(a);
  return argv;
}

std::vector<std::string> SbatchGroupArgv(
    const std::string& sbatch, const SlurmOptions& options, const JobUser& user,
    const std::vector<JobSpec>& specs, const std::string& script,
    const std::vector<std::string>& launcher) {
  int gpus = 0;
  for (const JobSpec& s : specs) gpus = std::max(gpus, s.gpus);
  std::vector<std::string> argv = SbatchOptions(
      sbatch, options, user, specs.front(), static_cast<int>(specs.size()),
      gpus > 0 ? absl::StrCat("--gpus-per-task=", gpus) : "");
  argv.push_back(script);
  for (const std::string& a : launcher) argv.push_back(a);
  return argv;
}

std::vector<std::string> SrunArgv(const std::string& srun, int tasks,
                                  const std::vector<std::string>& task_argv) {
  std::vector<std::string> argv = {srun, "--kill-on-bad-exit=1",
                                   absl::StrCat("--ntasks=", tasks),
                                   "--input=none"};
  for (const std::string& a : task_argv) argv.push_back(a);
  return argv;
}

std::vector<std::string> SlurmEnvironment(const JobUser& user,
                                          const JobSpec& spec,
                                          const std::string& slurm_conf) {
  std::map<std::string, std::string> env = JobEnvironment(user, spec);
  env.erase("CUDA_VISIBLE_DEVICES");  // Slurm picks the devices (--gres).
  if (!slurm_conf.empty()) env["SLURM_CONF"] = slurm_conf;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

absl::StatusOr<std::map<int64_t, SlurmJobStatus>> ParseSqueue(
    absl::string_view out) {
  std::map<int64_t, SlurmJobStatus> jobs;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, '|');
    for (std::string& s : f) s = std::string(absl::StripAsciiWhitespace(s));
    SlurmJobStatus s;
    if (f.size() < 5 || !absl::SimpleAtoi(f[0], &s.id) ||
        !absl::SimpleAtoi(f[3], &s.restarts) ||
        !absl::SimpleAtoi(f[4].empty() ? "0" : f[4], &s.wait_status)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected squeue line: \"", line.substr(0, 200), "\""));
    }
    s.state = f[1];
    s.reason = f[2];
    jobs[s.id] = std::move(s);
  }
  return jobs;
}

std::optional<JobExit> SlurmExit(const SlurmJobStatus& status) {
  const std::string& state = status.state;
  const std::string detail =
      status.reason.empty() || status.reason == "None"
          ? absl::StrCat("Slurm job ", status.id, " ", state)
          : absl::StrCat("Slurm job ", status.id, " ", state, ": ",
                         status.reason);
  if (state == "COMPLETED" || state == "FAILED") {
    const int ws = status.wait_status;
    JobExit exit;
    exit.detail = detail;
    if (WIFSIGNALED(ws) && WTERMSIG(ws) != 0) {
      exit.signal = WTERMSIG(ws);
    } else {
      exit.exit_code = WEXITSTATUS(ws);
    }
    // A failure without a code of its own (e.g. the launch failed).
    if (state == "FAILED" && exit.ok()) exit.exit_code = 1;
    return exit;
  }
  if (state == "CANCELLED" || state == "PREEMPTED") {
    return Killed(SIGTERM, detail);
  }
  static const std::set<std::string> kKilled = {
      "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"};
  if (kKilled.count(state) > 0) return Killed(SIGKILL, detail);
  // PENDING, RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED,
  // REQUEUE_HOLD, RESIZING, SIGNALING, STAGE_OUT, ...: not over.
  return std::nullopt;
}

absl::StatusOr<int64_t> ParseSbatchId(absl::string_view out) {
  absl::string_view first = absl::StripAsciiWhitespace(out);
  first = first.substr(0, first.find('\n'));
  first = first.substr(0, first.find(';'));
  int64_t id = 0;
  if (!absl::SimpleAtoi(first, &id) || id <= 0) {
    return absl::InternalError(
        absl::StrCat("sbatch printed no job id: \"", out.substr(0, 200), "\""));
  }
  return id;
}

}  // namespace cairn::jobs
