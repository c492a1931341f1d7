// See training_job_view.h.
#include "sagemaker/training_job_view.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "api/trial_states.h"
#include "google/protobuf/util/json_util.h"
#include "jobs/stop_reason.h"
#include "sagemaker/container_files.h"
#include "sagemaker/instance_types.h"
#include "sagemaker/job_timeline.h"
#include "sagemaker/tags.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_times.h"
#include "sagemaker/training_run.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::Trial;

// The value of metric `id` in the final measurement, else in the latest of
// `trial.measurements()` holding it (a job stopped, or timed out, before
// its last measurement could become final); nullopt if none has it.
std::optional<double> FinalValue(const Trial& trial, const std::string& id) {
  for (const auto& m : trial.final_measurement().metrics()) {
    if (m.metric_id() == id) return m.value();
  }
  for (auto it = trial.measurements().rbegin();
       it != trial.measurements().rend(); ++it) {
    for (const auto& m : it->metrics()) {
      if (m.metric_id() == id) return m.value();
    }
  }
  return std::nullopt;
}

// The FinalMetricDataList: the final value of each metric (FinalValue).
nlohmann::json FinalMetrics(const cairn::v1::Study& study, const Trial& trial) {
  nlohmann::json out = nlohmann::json::array();
  const auto& request = study.spec().sagemaker_training_job();
  for (const auto& def :
       request.algorithm_specification().metric_definitions()) {
    const std::optional<double> value =
        FinalValue(trial, MetricIdOf(def.name()));
    if (!value.has_value()) continue;
    out.push_back({{"MetricName", def.name()},
                   {"Value", *value},
                   {"Timestamp", EpochSeconds(trial.end_time())}});
  }
  return out;
}

// The job template that runs `request`'s image (training_run.h fits each
// attempt to SageMaker's contract): entrypoint, CPUs and GPUs of the
// instance type, one replica per host (InstanceCount), MaxRuntimeInSeconds
// as the attempt's limit, no restarts.
void SetJobTemplate(const cairn::v1::SageMakerCreateTrainingJobRequest& request,
                    cairn::v1::TrialJobTemplate& tmpl) {
  const auto& algo = request.algorithm_specification();
  cairn::v1::ContainerSpec* box = tmpl.mutable_container();
  box->set_image(algo.training_image());
  *box->mutable_command() = algo.container_entrypoint();
  absl::StatusOr<InstanceType> type =
      LookUpInstanceType(request.resource_config().instance_type());
  const int gpus = type.ok() ? type->gpus : 0;
  if (type.ok()) box->set_cpus(type->cpus);
  const int hosts = request.resource_config().instance_count();
  if (hosts <= 1) {
    tmpl.set_gpus_per_trial(gpus);
  } else {
    // One container per host: algo-1 is the master, whose exit ends the job.
    for (const auto& [role, count] :
         {std::pair{cairn::v1::ReplicaGroup::MASTER, 1},
          std::pair{cairn::v1::ReplicaGroup::WORKER, hosts - 1}}) {
      cairn::v1::ReplicaGroup* group = tmpl.add_replicas();
      group->set_type(role);
      group->set_count(count);
      group->set_gpus_per_replica(gpus);
    }
  }
  const int runtime =
      request.stopping_condition().has_max_runtime_in_seconds()
          ? request.stopping_condition().max_runtime_in_seconds()
          : kDefaultRuntimeSeconds;
  tmpl.mutable_max_running_time()->set_seconds(runtime);
}

// SageMaker's SecondaryStatus for `status` (TrainingJobStatus's).
std::string SecondaryStatus(const std::string& status, const Trial* trial) {
  if (status == "InProgress") {
    const bool running = trial != nullptr &&
                         trial->job().state() == cairn::v1::TrialJob::RUNNING;
    return running ? "Training" : "Starting";
  }
  if (status == "Stopped" && trial != nullptr &&
      trial->infeasible_reason() == jobs::kTimeoutMessage) {
    return "MaxRuntimeExceeded";
  }
  return status;
}

// What the times of the job run by `trial` (nullptr: none yet) are made
// of; `created` is its CreationTime.
JobMoments MomentsOf(double created, const Trial* trial) {
  JobMoments m;
  m.created = created;
  if (trial == nullptr) return m;
  m.timeline = ReadTimeline(trial->job().job_dir());
  if (trial->has_end_time()) m.ended = EpochSeconds(trial->end_time());
  return m;
}

JobStanding StandingOf(const std::string& status, const Trial* trial) {
  JobStanding s{status, SecondaryStatus(status, trial), ""};
  if (trial != nullptr) {
    auto reason = trial->metadata().find(api::kEarlyStoppingReasonKey);
    if (reason != trial->metadata().end()) {
      s.stop_detail = "early stopping, " + reason->second;
    }
  }
  return s;
}

}  // namespace

std::string MetricIdOf(const std::string& name) {
  std::string id;
  for (char c : name) {
    const bool ok =
        absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-';
    id.push_back(ok ? c : '_');
  }
  if (id.empty() || !(absl::ascii_isalpha(id[0]) || id[0] == '_')) {
    id.insert(0, "_");
  }
  return id;
}

cairn::v1::Study TrainingJobStudy(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request) {
  cairn::v1::Study study;
  study.set_display_name(request.training_job_name());
  cairn::v1::StudySpec* spec = study.mutable_spec();
  spec->set_max_trials(1);
  for (const auto& def :
       request.algorithm_specification().metric_definitions()) {
    cairn::v1::MetricSpec* m = spec->add_metrics();
    m->set_metric_id(MetricIdOf(def.name()));
    m->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  }
  if (spec->metrics_size() == 0) {
    cairn::v1::MetricSpec* m = spec->add_metrics();
    m->set_metric_id("objective");
    m->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  }
  SetJobTemplate(request, *spec->mutable_job_template());
  (*spec->mutable_labels())["sagemaker"] = "training-job";
  for (const auto& [label, value] :
       TagLabels({request.tags().begin(), request.tags().end()})) {
    (*spec->mutable_labels())[label] = value;
  }
  *spec->mutable_sagemaker_training_job() = request;
  return study;
}

std::string TrainingJobStatus(const Trial* trial) {
  if (trial == nullptr) return "InProgress";
  // Stopped after its trial ended: Stopping until its container is gone.
  if (trial->job().state() == cairn::v1::TrialJob::STOPPING) return "Stopping";
  switch (trial->state()) {
    case Trial::STOPPING:
      return "Stopping";
    case Trial::SUCCEEDED:
      // Stopped early (by a tuning job's early stopping or a stop) with
      // its last measurement as final: SageMaker says Stopped.
      return trial->stopped_early() ? "Stopped" : "Completed";
    case Trial::CANCELLED:
      return "Stopped";
    case Trial::INFEASIBLE:
    case Trial::FAILED:
      return trial->infeasible_reason() == kStoppedReason ||
                     trial->infeasible_reason() == jobs::kTimeoutMessage
                 ? "Stopped"
                 : "Failed";
    default:
      return "InProgress";
  }
}

std::string JobStatus(const cairn::v1::Study& study, const Trial* trial) {
  if (trial == nullptr && study.state() == cairn::v1::Study::INACTIVE) {
    return "Stopped";
  }
  return TrainingJobStatus(trial);
}

double EpochSeconds(const google::protobuf::Timestamp& t) {
  return static_cast<double>(t.seconds()) + t.nanos() / 1e9;
}

nlohmann::json RequestJson(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  if (!google::protobuf::util::MessageToJsonString(request, &text, options)
           .ok()) {
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text, nullptr, false);
}

std::string FailureReasonText(std::string reason) {
  if (reason.size() <= 1024) return reason;
  size_t end = 1024;  // not inside a UTF-8 sequence
  while (end > 0 && (static_cast<unsigned char>(reason[end]) & 0xC0) == 0x80) {
    --end;
  }
  reason.resize(end);
  return reason;
}

std::string JobFailureReason(const Trial& trial) {
  const std::string written =
      trial.job().job_dir().empty()
          ? ""
          : ReadFailureReason(HostDir(trial.job().job_dir(), 0));
  return FailureReasonText(written.empty() ? trial.infeasible_reason()
                                           : written);
}

nlohmann::json TrainingJobSummaryJson(const cairn::v1::Study& study,
                                      const Trial* trial) {
  const std::string& name = study.display_name();
  const std::string status = JobStatus(study, trial);
  const double created = EpochSeconds(study.create_time());
  nlohmann::json out = {{"TrainingJobName", name},
                        {"TrainingJobArn", TrainingJobArn(name)},
                        {"CreationTime", created},
                        {"TrainingJobStatus", status}};
  if (trial != nullptr && trial->has_end_time()) {
    out["TrainingEndTime"] = EpochSeconds(trial->end_time());
  }
  out["LastModifiedTime"] =
      LastModifiedTime(MomentsOf(created, trial), StandingOf(status, trial));
  return out;
}

nlohmann::json DescribeTrainingJobJson(const cairn::v1::Study& study,
                                       const Trial* trial) {
  const auto& r = study.spec().sagemaker_training_job();
  nlohmann::json out = RequestJson(r);
  out.erase("Tags");
  out.update(TrainingJobSummaryJson(study, trial));
  const std::string status = JobStatus(study, trial);
  const JobStanding standing = StandingOf(status, trial);
  out["SecondaryStatus"] = standing.secondary;
  out["ModelArtifacts"] = {{"S3ModelArtifacts", OutputUri(r, "model.tar.gz")}};
  AddJobTimes(MomentsOf(EpochSeconds(study.create_time()), trial), standing,
              &out);
  if (trial == nullptr) return out;
  if (status == "Failed") out["FailureReason"] = JobFailureReason(*trial);
  out["FinalMetricDataList"] = FinalMetrics(study, *trial);
  return out;
}

}  // namespace cairn::sagemaker
