// Starting an attempt of a trial's job.
#include "jobs/attempt_starter.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jobs/job_command.h"
#include "jobs/job_logs.h"
#include "jobs/tf_config.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

// Records the started group in `job`: RUNNING, every replica's pid.
void RecordStarted(const std::string& trial_name, bool resume,
                   const ReplicaGroup& group, const std::vector<int>& gpus,
                   TrialJob& job) {
  std::vector<std::string> pids;
  job.clear_replica_processes();
  for (const RunningReplica& p : group.processes()) {
    pids.push_back(group.processes().size() == 1
                       ? absl::StrCat(p.handle.pid)
                       : absl::StrCat(p.name, " ", p.handle.pid));
    if (group.processes().size() == 1) continue;
    cairn::v1::ReplicaProcess* stored = job.add_replica_processes();
    stored->set_name(p.name);
    stored->set_pid(p.handle.pid);
    stored->set_proc_start_ticks(p.handle.start_ticks);
  }
  spdlog::info("job {}: started attempt {}{} (pid {}, GPUs [{}])", trial_name,
               job.attempts(), resume ? ", resuming" : "",
               absl::StrJoin(pids, ", "), absl::StrJoin(gpus, ","));
  job.set_state(TrialJob::RUNNING);
  job.set_pid(group.master().pid);
  job.set_proc_start_ticks(group.master().start_ticks);
  job.set_message("");
}

}  // namespace

AttemptStarter::AttemptStarter(Executor* executor, util::Clock* clock,
                               AttemptSettings settings)
    : executor_(executor), clock_(clock), settings_(std::move(settings)) {}

absl::StatusOr<ReplicaGroup> AttemptStarter::Start(
    const cairn::v1::Study& study, int64_t study_id, const Trial& trial,
    const std::vector<int>& gpus, TrialJob& job) const {
  const cairn::v1::TrialJobTemplate& tmpl = study.spec().job_template();
  absl::StatusOr<fs::path> dir = CreateTrialJobDir(
      settings_.roots, study.spec(), study_id, trial.id(), settings_.job_user);
  if (!dir.ok()) return dir.status();
  std::vector<ReplicaTask> replicas = ExpandReplicas(tmpl);
  if (absl::Status placed = PlaceReplicas(tmpl, gpus, replicas); !placed.ok()) {
    return placed;
  }
  const bool resume = job.attempts() > 0;
  job.set_attempts(job.attempts() + 1);
  job.set_job_dir(dir->string());
  job.set_log_path(JobLogPath(*dir).string());
  job.clear_gpus();
  for (int g : gpus) job.add_gpus(g);
  JobContext context{settings_.server_address,
                     study.name(),
                     *dir,
                     resume,
                     /*token=*/"",
                     /*metric_tag=*/"",
                     settings_.server_tls_ca,
                     settings_.python_sdk};
  if (!study.spec().metrics().empty()) {
    context.metric_tag = study.spec().metrics(0).metric_id();
  }
  if (settings_.mint_token) {
    absl::StatusOr<std::string> token = settings_.mint_token(trial.name());
    if (!token.ok()) return token.status();
    context.token = *std::move(token);
  }
  std::vector<JobSpec> specs = MakeJobSpecs(tmpl, trial, context, replicas);
  for (JobSpec& spec : specs) {
    if (!spec.container) continue;
    spec.container->labels["cairn.attempt"] = absl::StrCat(job.attempts());
  }
  if (settings_.hooks != nullptr) {
    absl::Status prepared =
        settings_.hooks->BeforeStart(study, trial, dir->string(), specs);
    if (!prepared.ok()) return prepared;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) {
    names.push_back(replicas[i].Name());
    absl::Status header =
        AppendAttemptHeader(specs[i].log_path, trial.name(), job.attempts(),
                            resume, clock_->Now(), specs[i].argv);
    if (!header.ok()) {
      spdlog::warn("job runner: {} for trial {} failed: {}",
                   "writing the attempt header to the job log", trial.name(),
                   header.ToString());
    }
  }
  absl::StatusOr<ReplicaGroup> group =
      ReplicaGroup::Start(executor_, names, specs, settings_.grace_period);
  if (!group.ok()) return group.status();
  RecordStarted(trial.name(), resume, *group, gpus, job);
  return group;
}

}  // namespace cairn::jobs
