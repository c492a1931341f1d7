// See sagemaker_calls.h.
#include "http/sagemaker_calls.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "sagemaker/channel_mounts.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/warm_start.h"

namespace cairn::http::sagemaker_calls {

using nlohmann::json;
absl::Status CheckLocations(
    const sagemaker::ObjectRoot& objects,
    const cairn::v1::SageMakerCreateTrainingJobRequest& r) {
  for (const auto& c : r.input_data_config()) {
    if (absl::Status s = sagemaker::CheckChannel(objects, c); !s.ok()) {
      return s;
    }
  }
  absl::Status s = objects
                       .Resolve("OutputDataConfig.S3OutputPath",
                                r.output_data_config().s3_output_path())
                       .status();
  if (s.ok() && r.has_checkpoint_config()) {
    s = objects
            .Resolve("CheckpointConfig.S3Uri", r.checkpoint_config().s3_uri())
            .status();
  }
  return s;
}

absl::StatusOr<std::optional<cairn::v1::Trial>> TrialOf(
    Stub* stub, const HttpRequest& http, const std::string& study) {
  cairn::v1::ListTrialsRequest req;
  req.set_parent(study);
  auto trials = Rpc(stub, http, &Stub::ListTrials, req);
  if (!trials.ok()) return trials.status();
  if (trials->trials_size() == 0) return std::nullopt;
  return trials->trials(0);
}

namespace {

// The study whose display name is `name`; nullopt if there is none.
absl::StatusOr<std::optional<cairn::v1::Study>> StudyNamed(
    Stub* stub, const HttpRequest& http, const std::string& name) {
  cairn::v1::LookupStudyRequest req;
  req.set_display_name(name);
  auto study = Rpc(stub, http, &Stub::LookupStudy, req);
  if (study.ok()) return *std::move(study);
  if (study.status().code() == absl::StatusCode::kNotFound) {
    return std::nullopt;
  }
  return study.status();
}

}  // namespace

absl::StatusOr<JobRecord> FindJob(Stub* stub, const HttpRequest& http,
                                  const std::string& name) {
  auto study = StudyNamed(stub, http, name);
  if (!study.ok()) return study.status();
  if (!*study || !(*study)->spec().has_sagemaker_training_job() ||
      sagemaker::IsTuningJobStudy(**study)) {
    return absl::NotFoundError(absl::StrCat(
        "Requested resource not found: training job '", name, "'"));
  }
  auto trial = TrialOf(stub, http, (*study)->name());
  if (!trial.ok()) return trial.status();
  return JobRecord{**std::move(study), *std::move(trial)};
}

absl::StatusOr<TuningRecord> FindTuningJobNamed(Stub* stub,
                                                const HttpRequest& http,
                                                const std::string& name) {
  auto study = StudyNamed(stub, http, name);
  if (!study.ok()) return study.status();
  if (!*study || !sagemaker::IsTuningJobStudy(**study)) {
    return absl::NotFoundError(
        absl::StrCat("Requested resource not found: tuning job '", name, "'"));
  }
  TuningRecord record{**std::move(study), {}};
  cairn::v1::ListTrialsRequest list;
  list.set_parent(record.study.name());
  auto trials = Rpc(stub, http, &Stub::ListTrials, list);
  if (!trials.ok()) return trials.status();
  record.trials.assign(trials->trials().begin(), trials->trials().end());
  return record;
}

absl::StatusOr<TuningRecord> FindTuningJob(Stub* stub, const HttpRequest& http,
                                           const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  const char* kKey = "HyperParameterTuningJobName";
  if (!j.is_object() || !j.contains(kKey) || !j[kKey].is_string()) {
    return absl::InvalidArgumentError(
        "request body: give {\"HyperParameterTuningJobName\": NAME}");
  }
  const std::string name = j[kKey].get<std::string>();
  absl::Status s = sagemaker::ValidateJobName(
      kKey, name, sagemaker::kMaxTuningJobNameLength);
  if (!s.ok()) return s;
  return FindTuningJobNamed(stub, http, name);
}

absl::StatusOr<JobRecord> FindTuningTrainingJob(Stub* stub,
                                                const HttpRequest& http,
                                                const std::string& name) {
  auto ref = sagemaker::ParseTuningTrainingJobName(name);
  if (!ref) return absl::NotFoundError(name);
  auto tuning = FindTuningJobNamed(stub, http, ref->tuning_name);
  if (!tuning.ok()) return tuning.status();
  const std::string& study = tuning->study.name();
  for (cairn::v1::Trial& trial : tuning->trials) {
    if (trial.id() == ref->trial_id &&
        sagemaker::TuningTrainingJobName(ref->tuning_name, study, trial.id()) ==
            name) {
      return JobRecord{std::move(tuning->study), std::move(trial), true};
    }
  }
  return absl::NotFoundError(name);
}

absl::StatusOr<JobRecord> FindAnyJob(Stub* stub, const HttpRequest& http,
                                     const std::string& name) {
  absl::StatusOr<JobRecord> job = FindJob(stub, http, name);
  if (job.ok() || job.status().code() != absl::StatusCode::kNotFound) {
    return job;
  }
  absl::StatusOr<JobRecord> trial_job = FindTuningTrainingJob(stub, http, name);
  if (trial_job.ok() && sagemaker::IsWarmStartTrial(*trial_job->trial)) {
    return job.status();  // a parent's job, not one of this tuning job's
  }
  if (!trial_job.ok() &&
      trial_job.status().code() == absl::StatusCode::kNotFound) {
    return job.status();
  }
  return trial_job;
}

absl::StatusOr<std::vector<cairn::v1::Study>> AllStudies(
    Stub* stub, const HttpRequest& http) {
  std::vector<cairn::v1::Study> out;
  cairn::v1::ListStudiesRequest req;
  do {
    auto page = Rpc(stub, http, &Stub::ListStudies, req);
    if (!page.ok()) return page.status();
    out.insert(out.end(), page->studies().begin(), page->studies().end());
    req.set_page_token(page->next_page_token());
  } while (!req.page_token().empty());
  return out;
}

std::string PageBody(std::vector<json> summaries,
                     const sagemaker::ListQuery& query, const char* member) {
  sagemaker::ListPage page = sagemaker::SelectPage(std::move(summaries), query);
  json out = {{member, page.summaries}};
  if (!page.next_token.empty()) out["NextToken"] = page.next_token;
  return out.dump();
}

absl::Status StopJobTrial(Stub* stub, const HttpRequest& http,
                          const cairn::v1::Trial& trial) {
  cairn::v1::StopTrialRequest stop;
  stop.set_name(trial.name());
  return Rpc(stub, http, &Stub::StopTrial, stop).status();
}

absl::StatusOr<cairn::v1::Trial> WithMeasurements(
    Stub* stub, const HttpRequest& http, const cairn::v1::Trial& trial) {
  cairn::v1::GetTrialRequest get;
  get.set_name(trial.name());
  return Rpc(stub, http, &Stub::GetTrial, get);
}

}  // namespace cairn::http::sagemaker_calls
