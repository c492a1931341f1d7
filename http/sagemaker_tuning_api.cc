// SageMaker's tuning-job operations (sagemaker_api.h): each a study whose
// trials are the training jobs (sagemaker/tuning_job_view.h).
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http/sagemaker_api.h"
#include "http/sagemaker_calls.h"
#include "nlohmann/json.hpp"
#include "sagemaker/container_files.h"
#include "sagemaker/list_query.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_config_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"
#include "sagemaker/warm_start.h"

namespace cairn::http {

using nlohmann::json;
using namespace sagemaker_calls;  // NOLINT: the shared calls, many of them.

namespace {

// The prior trials a warm-started tuning job `child` starts with, from its
// parents as they are now.
absl::StatusOr<std::vector<cairn::v1::Trial>> WarmStartTrialsOf(
    Stub* stub, const HttpRequest& http,
    const sagemaker::WarmStartConfig& config, const cairn::v1::Study& child) {
  std::vector<sagemaker::WarmStartParent> parents;
  for (const std::string& name : config.parents) {
    auto parent = FindTuningJobNamed(stub, http, name);
    if (!parent.ok()) {
      return absl::Status(
          parent.status().code(),
          absl::StrCat("WarmStartConfig.ParentHyperParameterTuningJobs: ",
                       parent.status().message()));
    }
    parents.push_back({std::move(parent->study), std::move(parent->trials)});
  }
  return sagemaker::WarmStartTrials(config, child, parents);
}

// Creates `study` paused, tells it `prior`, then starts it; deletes it if
// that fails, so no half-told tuning job is left.
absl::StatusOr<cairn::v1::Study> CreateWarmStudy(
    Stub* stub, const HttpRequest& http, cairn::v1::Study study,
    const std::vector<cairn::v1::Trial>& prior) {
  study.set_state(cairn::v1::Study::INACTIVE);
  study.set_inactive_reason("warm start: copying its parents' trials");
  study.mutable_spec()->set_max_trials(study.spec().max_trials() +
                                       static_cast<int>(prior.size()));
  cairn::v1::CreateStudyRequest create;
  *create.mutable_study() = std::move(study);
  auto created = Rpc(stub, http, &Stub::CreateStudy, create);
  if (!created.ok()) return created.status();
  absl::Status s;
  for (const cairn::v1::Trial& trial : prior) {
    cairn::v1::CreateTrialRequest add;
    add.set_parent(created->name());
    *add.mutable_trial() = trial;
    s = Rpc(stub, http, &Stub::CreateTrial, add).status();
    if (!s.ok()) break;
  }
  cairn::v1::SetStudyStateRequest start;
  start.set_name(created->name());
  start.set_state(cairn::v1::Study::ACTIVE);
  if (s.ok()) s = Rpc(stub, http, &Stub::SetStudyState, start).status();
  if (s.ok()) return created;
  cairn::v1::DeleteStudyRequest undo;
  undo.set_name(created->name());
  (void)Rpc(stub, http, &Stub::DeleteStudy, undo);
  return s;
}

// OverallBestTrainingJob of an IdenticalDataAndAlgorithm warm start: the
// best job of the tuning job and its parents (a parent's, looked up by
// the prior trial's labels); null otherwise, or when that parent is gone.
json OverallBestJob(Stub* stub, const HttpRequest& http,
                    const TuningRecord& job) {
  const json warm = sagemaker::WarmStartConfigJson(job.study);
  if (warm.is_null() || warm["WarmStartType"] != "IdenticalDataAndAlgorithm") {
    return nullptr;
  }
  const cairn::v1::Trial* best =
      sagemaker::OverallBestTrial(job.study, job.trials);
  if (best == nullptr) return nullptr;
  if (!sagemaker::IsWarmStartTrial(*best)) {
    return sagemaker::BestTrainingJob(job.study, job.trials);
  }
  const auto& labels = best->labels();
  auto parent = FindTuningJobNamed(stub, http,
                                   labels.at(sagemaker::kWarmStartTrialLabel));
  auto id = labels.find(sagemaker::kWarmStartTrialIdLabel);
  if (!parent.ok() || id == labels.end()) return nullptr;
  for (const cairn::v1::Trial& trial : parent->trials) {
    if (absl::StrCat(trial.id()) != id->second) continue;
    auto summary = sagemaker::TuningTrainingJobSummary(parent->study, trial);
    return summary.ok() ? *summary : json(nullptr);
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::string> SageMakerApi::ListTuning(const Call& call) const {
  absl::StatusOr<sagemaker::ListQuery> query = sagemaker::ParseListQuery(
      call.http.body, sagemaker::ListKind::kTuningJobs);
  if (!query.ok()) return query.status();
  auto studies = AllStudies(stub_.get(), call.http);
  if (!studies.ok()) return studies.status();
  std::vector<json> summaries;
  for (const cairn::v1::Study& study : *studies) {
    if (!sagemaker::IsTuningJobStudy(study)) continue;
    cairn::v1::ListTrialsRequest list;
    list.set_parent(study.name());
    auto trials = Rpc(stub_.get(), call.http, &Stub::ListTrials, list);
    if (!trials.ok()) return trials.status();
    summaries.push_back(sagemaker::TuningJobSummaryJson(
        study, {trials->trials().begin(), trials->trials().end()}));
  }
  return PageBody(std::move(summaries), *query,
                  "HyperParameterTuningJobSummaries");
}

absl::StatusOr<std::string> SageMakerApi::StopTuning(const Call& call) const {
  auto job = FindTuningJob(stub_.get(), call.http, call.http.body);
  if (!job.ok()) return job.status();
  // Stopping (jobs still running) may be asked again.
  const std::string status =
      sagemaker::TuningJobStatus(job->study, job->trials);
  if (status != "InProgress" && status != "Stopping") {
    return sagemaker::InvalidField(
        "HyperParameterTuningJobName", job->study.display_name(),
        absl::StrCat("the tuning job is ", status, ", not InProgress"));
  }
  // No new training jobs first, then the running ones end: the job runner
  // stops the jobs of a paused study; StopJobTrial also reaches a job whose
  // trial already ended.
  cairn::v1::SetStudyStateRequest pause;
  pause.set_name(job->study.name());
  pause.set_state(cairn::v1::Study::INACTIVE);
  auto paused = Rpc(stub_.get(), call.http, &Stub::SetStudyState, pause);
  if (!paused.ok()) return paused.status();
  for (const cairn::v1::Trial& trial : job->trials) {
    const std::string one = sagemaker::TrainingJobStatus(&trial);
    if (one != "InProgress" && one != "Stopping") continue;
    absl::Status s = StopJobTrial(stub_.get(), call.http, trial);
    if (!s.ok() && s.code() != absl::StatusCode::kFailedPrecondition) return s;
  }
  return std::string("{}");
}

absl::StatusOr<std::string> SageMakerApi::CreateTuning(const Call& call) const {
  auto request = sagemaker::ParseCreateTuningJob(call.http.body);
  if (!request.ok()) return request.status();
  if (absl::Status s = CheckLocations(objects_, request->training); !s.ok()) {
    return s;
  }
  cairn::v1::Study spec = sagemaker::TuningJobStudy(*request);
  absl::StatusOr<cairn::v1::Study> study;
  if (request->warm_start) {
    auto prior =
        WarmStartTrialsOf(stub_.get(), call.http, *request->warm_start, spec);
    if (!prior.ok()) return prior.status();
    sagemaker::SetWarmStartLabels(*request->warm_start, &spec);
    study = CreateWarmStudy(stub_.get(), call.http, std::move(spec), *prior);
  } else {
    cairn::v1::CreateStudyRequest create;
    *create.mutable_study() = std::move(spec);
    study = Rpc(stub_.get(), call.http, &Stub::CreateStudy, create);
  }
  if (!study.ok() &&
      study.status().code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        absl::StrCat("HyperParameterTuningJobName '", request->name,
                     "': a tuning job (or study) of that name exists"));
  }
  if (!study.ok()) return study.status();
  return json({{"HyperParameterTuningJobArn",
                sagemaker::TuningJobArn(request->name)}})
      .dump();
}

absl::StatusOr<std::string> SageMakerApi::DescribeTuning(
    const Call& call) const {
  auto job = FindTuningJob(stub_.get(), call.http, call.http.body);
  if (!job.ok()) return job.status();
  json out = sagemaker::DescribeTuningJobJson(job->study, job->trials);
  json overall = OverallBestJob(stub_.get(), call.http, *job);
  if (!overall.is_null()) out["OverallBestTrainingJob"] = std::move(overall);
  return out.dump();
}

absl::StatusOr<std::string> SageMakerApi::ListTuningJobs(
    const Call& call) const {
  absl::StatusOr<sagemaker::ListQuery> query = sagemaker::ParseListQuery(
      call.http.body, sagemaker::ListKind::kTuningTrainingJobs);
  if (!query.ok()) return query.status();
  auto job = FindTuningJob(stub_.get(), call.http, call.http.body);
  if (!job.ok()) return job.status();
  std::vector<json> summaries;
  for (const cairn::v1::Trial& trial : job->trials) {
    if (sagemaker::IsWarmStartTrial(trial)) continue;
    auto summary = sagemaker::TuningTrainingJobSummary(job->study, trial);
    if (!summary.ok()) return summary.status();
    summaries.push_back(*std::move(summary));
  }
  return PageBody(std::move(summaries), *query, "TrainingJobSummaries");
}

}  // namespace cairn::http
