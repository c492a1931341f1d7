// Argv and environment of training jobs. See job_command.h.
#include "jobs/job_command.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "util/number_text.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

std::string FormatValue(const google::protobuf::Value& v) {
  if (v.kind_case() == google::protobuf::Value::kStringValue) {
    return v.string_value();
  }
  if (v.kind_case() == google::protobuf::Value::kBoolValue) {
    return v.bool_value() ? "true" : "false";
  }
  return util::ShortestRoundTripNumber(v.number_value());
}

std::vector<std::string> MakeArgv(const cairn::v1::TrialJobTemplate& tmpl,
                                  const cairn::v1::Trial& trial,
                                  const fs::path& job_dir) {
  std::vector<std::string> argv(tmpl.command().begin(), tmpl.command().end());
  // In a container the image (or container.command) is the program.
  argv.insert(argv.end(), tmpl.container().args().begin(),
              tmpl.container().args().end());
  for (const auto& p : trial.parameters()) {
    argv.push_back(
        absl::StrCat("--", p.parameter_id(), "=", FormatValue(p.value())));
  }
  argv.push_back(absl::StrCat("--job-dir=", job_dir.string()));
  return argv;
}

// The variables every replica gets.
void SetCommonEnv(const cairn::v1::TrialJobTemplate& tmpl,
                  const std::string& trial_id, const JobContext& context,
                  std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : tmpl.env()) env[k] = v;
  env["CAIRN_STUDY"] = context.study_name;
  env["CAIRN_TRIAL_ID"] = trial_id;
  env["CAIRN_JOB_DIR"] = context.job_dir.string();
  if (context.resume) env["CAIRN_RESUME"] = "1";
  env["CLOUD_ML_JOB_ID"] = tmpl.ai_platform_job_id().empty()
                               ? context.study_name
                               : tmpl.ai_platform_job_id();
  env["CLOUD_ML_TRIAL_ID"] = trial_id;
  env["CLOUD_ML_HP_METRIC_TAG"] = context.metric_tag;
  if (!context.python_sdk.empty()) {
    env["CAIRN_PYTHON_SDK"] = context.python_sdk;
    auto own = tmpl.env().find("PYTHONPATH");
    env["PYTHONPATH"] =
        own == tmpl.env().end() || own->second.empty()
            ? context.python_sdk
            : absl::StrCat(context.python_sdk, ":", own->second);
  }
}

// The variables only the master gets: how to report to cairnd.
void SetMasterEnv(const JobContext& context,
                  std::map<std::string, std::string>& env) {
  env["CAIRN_SERVER"] = context.server_address;
  if (!context.server_tls_ca.empty()) {
    env["CAIRN_TLS_CA"] = context.server_tls_ca;
  }
  if (!context.token.empty()) {
    env["CAIRN_TOKEN"] = context.token;
    env["CAIRN_TOKEN_FILE"] = "";  // Not a file cairnd's env may name.
  }
  env["CLOUD_ML_HP_METRIC_FILE"] = HypertunePath(context.job_dir).string();
}

// What a cluster scheduler needs besides argv and env (jobs/executor.h).
void SetSchedulerFields(const cairn::v1::TrialJobTemplate& tmpl,
                        const cairn::v1::Trial& trial, const ReplicaTask& task,
                        size_t replica_count, JobSpec& spec) {
  spec.name =
      absl::StrCat("cairn-", absl::StrReplaceAll(trial.name(), {{"/", "-"}}));
  spec.gpus = static_cast<int>(task.gpus.size());
  if (tmpl.has_max_running_time()) {
    const google::protobuf::Duration& d = tmpl.max_running_time();
    const absl::Duration limit =
        absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
    if (limit > absl::ZeroDuration()) spec.time_limit = limit;
  }
  spec.replicas = static_cast<int>(replica_count);
}

// The template's container with the replica's group's override merged in
// (ReplicaGroup.container).
cairn::v1::ContainerSpec GroupContainer(const cairn::v1::TrialJobTemplate& tmpl,
                                        const ReplicaTask& task) {
  cairn::v1::ContainerSpec c = tmpl.container();
  for (const cairn::v1::ReplicaGroup& g : tmpl.replicas()) {
    if (g.type() != task.group || !g.has_container()) continue;
    const cairn::v1::ContainerSpec& o = g.container();
    if (!o.image().empty()) c.set_image(o.image());
    if (o.command_size() > 0) *c.mutable_command() = o.command();
    for (const auto& m : o.mounts()) *c.add_mounts() = m;
    if (o.cpus() > 0) c.set_cpus(o.cpus());
    if (o.memory_bytes() > 0) c.set_memory_bytes(o.memory_bytes());
    if (o.pids_limit() > 0) c.set_pids_limit(o.pids_limit());
  }
  return c;
}

// The container a replica runs in, when the template names an image.
std::optional<ContainerJob> MakeContainerJob(
    const cairn::v1::TrialJobTemplate& tmpl, const JobContext& context,
    const std::string& trial_id, const ReplicaTask& task) {
  if (!tmpl.has_container()) return std::nullopt;
  const cairn::v1::ContainerSpec c = GroupContainer(tmpl, task);
  ContainerJob job;
  job.image = c.image();
  job.entrypoint.assign(c.command().begin(), c.command().end());
  for (const cairn::v1::ContainerSpec::Mount& m : c.mounts()) {
    job.mounts.push_back({m.host_path(), m.container_path(), m.read_only()});
  }
  job.cpus = c.cpus();
  job.memory_bytes = c.memory_bytes();
  job.pids_limit = c.pids_limit();
  job.labels["cairn.study"] = context.study_name;
  job.labels["cairn.trial"] = trial_id;
  job.labels["cairn.replica"] = task.Name();
  return job;
}

}  // namespace

fs::path JobLogPath(const fs::path& job_dir) { return job_dir / "job.log"; }

fs::path HypertunePath(const fs::path& job_dir) {
  return job_dir / "hypertune.metrics";
}

fs::path ReplicaLogPath(const fs::path& job_dir, const std::string& name) {
  return job_dir / (name + ".log");
}

fs::path ReplicaHypertunePath(const fs::path& job_dir,
                              const std::string& name) {
  return job_dir / (name + ".hypertune.metrics");
}

std::vector<JobSpec> MakeJobSpecs(const cairn::v1::TrialJobTemplate& tmpl,
                                  const cairn::v1::Trial& trial,
                                  const JobContext& context,
                                  const std::vector<ReplicaTask>& replicas) {
  const std::string trial_id = absl::StrCat(trial.id());
  const std::vector<std::string> argv = MakeArgv(tmpl, trial, context.job_dir);
  std::vector<JobSpec> specs;
  for (const ReplicaTask& task : replicas) {
    JobSpec spec;
    spec.argv = argv;
    SetCommonEnv(tmpl, trial_id, context, spec.env);
    spec.env["CAIRN_REPLICA"] = task.Name();
    if (task.is_master()) {
      spec.log_path = JobLogPath(context.job_dir).string();
      SetMasterEnv(context, spec.env);
    } else {
      spec.log_path = ReplicaLogPath(context.job_dir, task.Name()).string();
      spec.env["CLOUD_ML_HP_METRIC_FILE"] =
          ReplicaHypertunePath(context.job_dir, task.Name()).string();
    }
    spec.env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(task.gpus, ",");
    const std::string job_json =
        tmpl.tf_config_job_json().empty()
            ? nlohmann::json({{"job_dir", context.job_dir.string()}}).dump()
            : tmpl.tf_config_job_json();
    spec.env["TF_CONFIG"] = TfConfigJson(replicas, task, trial_id, job_json);
    // AI Platform gives custom containers the cluster as CLUSTER_SPEC too,
    // for frameworks other than TensorFlow.
    if (tmpl.has_container()) spec.env["CLUSTER_SPEC"] = spec.env["TF_CONFIG"];
    for (const auto& [k, v] : TorchEnv(replicas, task)) spec.env[k] = v;
    SetSchedulerFields(tmpl, trial, task, replicas.size(), spec);
    spec.container = MakeContainerJob(tmpl, context, trial_id, task);
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string ReservedVariableReason(absl::string_view name) {
  if (absl::StartsWith(name, "LD_")) {
    return "LD_* variables steer the dynamic loader of every program the job "
           "runs";
  }
  if (absl::StartsWith(name, "CAIRN_") || absl::StartsWith(name, "CLOUD_ML_") ||
      name == "TF_CONFIG" || name == "CLUSTER_SPEC" ||
      name == "CUDA_VISIBLE_DEVICES" || name == "MASTER_ADDR" ||
      name == "MASTER_PORT" || name == "WORLD_SIZE" || name == "RANK") {
    return "cairnd sets it for each job";
  }
  return "";
}

}  // namespace cairn::jobs
