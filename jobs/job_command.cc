// Argv and environment of training jobs. See job_command.h.
#include "jobs/job_command.h"

#include <charconv>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

// Shortest text that parses back to the same double; integers without ".0".
std::string FormatNumber(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string FormatValue(const google::protobuf::Value& v) {
  if (v.kind_case() == google::protobuf::Value::kStringValue) {
    return v.string_value();
  }
  if (v.kind_case() == google::protobuf::Value::kBoolValue) {
    return v.bool_value() ? "true" : "false";
  }
  return FormatNumber(v.number_value());
}

std::vector<std::string> MakeArgv(const cairn::v1::TrialJobTemplate& tmpl,
                                  const cairn::v1::Trial& trial,
                                  const fs::path& job_dir) {
  std::vector<std::string> argv(tmpl.command().begin(), tmpl.command().end());
  for (const auto& p : trial.parameters()) {
    argv.push_back(
        absl::StrCat("--", p.parameter_id(), "=", FormatValue(p.value())));
  }
  argv.push_back(absl::StrCat("--job-dir=", job_dir.string()));
  return argv;
}

// TF_CONFIG of a one-task cluster, as AI Platform Training sets it.
std::string TfConfig(const std::string& trial_id, const fs::path& job_dir) {
  nlohmann::json tf_config = {
      {"cluster", {{"master", {"127.0.0.1:0"}}}},
      {"task", {{"type", "master"}, {"index", 0}, {"trial", trial_id}}},
      {"job", {{"job_dir", job_dir.string()}}},
      {"environment", "cloud"}};
  return tf_config.dump();
}

}  // namespace

fs::path JobLogPath(const fs::path& job_dir) { return job_dir / "job.log"; }

fs::path HypertunePath(const fs::path& job_dir) {
  return job_dir / "hypertune.metrics";
}

JobSpec MakeJobSpec(const cairn::v1::TrialJobTemplate& tmpl,
                    const cairn::v1::Trial& trial, const JobContext& context) {
  JobSpec spec;
  spec.argv = MakeArgv(tmpl, trial, context.job_dir);
  spec.log_path = JobLogPath(context.job_dir).string();
  for (const auto& [k, v] : tmpl.env()) spec.env[k] = v;
  const std::string trial_id = absl::StrCat(trial.id());
  spec.env["CAIRN_SERVER"] = context.server_address;
  spec.env["CAIRN_STUDY"] = context.study_name;
  spec.env["CAIRN_TRIAL_ID"] = trial_id;
  spec.env["CAIRN_JOB_DIR"] = context.job_dir.string();
  if (context.resume) spec.env["CAIRN_RESUME"] = "1";
  if (!context.token.empty()) {
    spec.env["CAIRN_TOKEN"] = context.token;
    spec.env["CAIRN_TOKEN_FILE"] = "";  // Not a file cairnd's env may name.
  }
  spec.env["CLOUD_ML_TRIAL_ID"] = trial_id;
  spec.env["CLOUD_ML_HP_METRIC_FILE"] = HypertunePath(context.job_dir).string();
  spec.env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(context.gpus, ",");
  spec.env["TF_CONFIG"] = TfConfig(trial_id, context.job_dir);
  spec.name =
      absl::StrCat("cairn-", absl::StrReplaceAll(trial.name(), {{"/", "-"}}));
  spec.gpus = static_cast<int>(context.gpus.size());
  if (tmpl.has_max_running_time()) {
    const google::protobuf::Duration& d = tmpl.max_running_time();
    const absl::Duration limit =
        absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
    if (limit > absl::ZeroDuration()) spec.time_limit = limit;
  }
  spec.replicas = 0;
  for (const auto& group : tmpl.replicas()) spec.replicas += group.count();
  if (spec.replicas < 1) spec.replicas = 1;
  return spec;
}

std::string ReservedVariableReason(absl::string_view name) {
  if (absl::StartsWith(name, "LD_")) {
    return "LD_* variables steer the dynamic loader of every program the job "
           "runs";
  }
  if (absl::StartsWith(name, "CAIRN_") || absl::StartsWith(name, "CLOUD_ML_") ||
      name == "TF_CONFIG" || name == "CUDA_VISIBLE_DEVICES") {
    return "cairnd sets it for each job";
  }
  return "";
}

}  // namespace cairn::jobs
