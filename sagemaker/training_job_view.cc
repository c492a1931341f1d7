// See training_job_view.h.
#include "sagemaker/training_job_view.h"

#include "absl/strings/ascii.h"
#include "google/protobuf/util/json_util.h"
#include "sagemaker/container_files.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::Trial;

double Seconds(const google::protobuf::Timestamp& t) {
  return static_cast<double>(t.seconds()) + t.nanos() / 1e9;
}

// A proto message (SageMaker json_names) as JSON.
nlohmann::json AsJson(const google::protobuf::Message& m) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  if (!google::protobuf::util::MessageToJsonString(m, &text, options).ok()) {
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text, nullptr, false);
}

// The FinalMetricDataList: the final measurement's value of each metric.
nlohmann::json FinalMetrics(const cairn::v1::Study& study, const Trial& trial) {
  nlohmann::json out = nlohmann::json::array();
  const auto& request = study.spec().sagemaker_training_job();
  for (const auto& def :
       request.algorithm_specification().metric_definitions()) {
    for (const auto& m : trial.final_measurement().metrics()) {
      if (m.metric_id() != MetricIdOf(def.name())) continue;
      out.push_back({{"MetricName", def.name()},
                     {"Value", m.value()},
                     {"Timestamp", Seconds(trial.end_time())}});
    }
  }
  return out;
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
  (*spec->mutable_labels())["sagemaker"] = "training-job";
  *spec->mutable_sagemaker_training_job() = request;
  return study;
}

std::string TrainingJobStatus(const Trial* trial) {
  if (trial == nullptr) return "InProgress";
  switch (trial->state()) {
    case Trial::STOPPING:
      return "Stopping";
    case Trial::SUCCEEDED:
      return "Completed";
    case Trial::CANCELLED:
      return "Stopped";
    case Trial::INFEASIBLE:
      return trial->infeasible_reason() == kStoppedReason ? "Stopped"
                                                          : "Failed";
    case Trial::FAILED:
      return "Failed";
    default:
      return "InProgress";
  }
}

nlohmann::json TrainingJobSummaryJson(const cairn::v1::Study& study,
                                      const Trial* trial) {
  const std::string& name = study.display_name();
  nlohmann::json out = {{"TrainingJobName", name},
                        {"TrainingJobArn", TrainingJobArn(name)},
                        {"CreationTime", Seconds(study.create_time())},
                        {"TrainingJobStatus", TrainingJobStatus(trial)}};
  if (trial != nullptr && trial->has_end_time()) {
    out["TrainingEndTime"] = Seconds(trial->end_time());
  }
  return out;
}

nlohmann::json DescribeTrainingJobJson(const cairn::v1::Study& study,
                                       const Trial* trial) {
  const auto& r = study.spec().sagemaker_training_job();
  nlohmann::json out = AsJson(r);
  out.erase("Tags");
  out.update(TrainingJobSummaryJson(study, trial));
  const std::string status = TrainingJobStatus(trial);
  out["SecondaryStatus"] = status == "InProgress" ? "Starting" : status;
  out["ModelArtifacts"] = {
      {"S3ModelArtifacts", r.output_data_config().s3_output_path() + "/" +
                               r.training_job_name() + "/output/model.tar.gz"}};
  if (trial == nullptr) return out;
  if (trial->has_start_time()) {
    out["TrainingStartTime"] = Seconds(trial->start_time());
  }
  if (status == "Failed") out["FailureReason"] = trial->infeasible_reason();
  out["FinalMetricDataList"] = FinalMetrics(study, *trial);
  return out;
}

}  // namespace cairn::sagemaker
