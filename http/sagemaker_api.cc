// See sagemaker_api.h.
#include "http/sagemaker_api.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "http/sagemaker_calls.h"
#include "nlohmann/json.hpp"
#include "sagemaker/aws_error.h"
#include "sagemaker/container_files.h"
#include "sagemaker/list_query.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_view.h"
#include "sagemaker/warm_start.h"

namespace cairn::http {

using nlohmann::json;
using namespace sagemaker_calls;  // NOLINT: the shared calls, many of them.

namespace {

HttpResponse AwsResponse(const absl::StatusOr<std::string>& body) {
  HttpResponse out;
  out.content_type = "application/x-amz-json-1.1";
  if (body.ok()) {
    out.body = *body;
    return out;
  }
  const sagemaker::AwsError error = sagemaker::AwsErrorOf(body.status());
  out.status = error.http_status;
  out.body = sagemaker::AwsErrorBody(error);
  return out;
}

std::string HeaderOf(const HttpRequest& r, absl::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

// The TrainingJobName member of a Describe or Stop body, validated.
absl::StatusOr<std::string> JobNameOf(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("TrainingJobName") ||
      !j["TrainingJobName"].is_string() || j.size() != 1) {
    return absl::InvalidArgumentError(
        "request body: give exactly {\"TrainingJobName\": NAME}");
  }
  const std::string name = j["TrainingJobName"].get<std::string>();
  if (absl::Status s = sagemaker::ValidateJobName("TrainingJobName", name);
      !s.ok()) {
    return s;
  }
  return name;
}

}  // namespace

bool SageMakerApi::Matches(const HttpRequest& request) {
  return request.method == "POST" && request.path == "/" &&
         !HeaderOf(request, "X-Amz-Target").empty();
}

HttpResponse SageMakerApi::Handle(const HttpRequest& request) const {
  Call call{request, ""};
  const std::string target_header = HeaderOf(request, "X-Amz-Target");
  absl::string_view target = target_header;
  const bool ours = absl::ConsumePrefix(&target, "SageMaker.");
  call.operation = std::string(target.substr(0, 64));
  sagemaker::SignedRequest signed_request{request.method, "/", request.query,
                                          request.headers, request.body};
  absl::StatusOr<std::string> bearer =
      authenticate_(signed_request, request, call.operation);
  if (!bearer.ok()) return AwsResponse(bearer.status());
  call.http.authorization = *bearer;
  // Another service's target (no "SageMaker." prefix) matches nothing.
  absl::StatusOr<std::string> result =
      Serve(call, ours ? target : absl::string_view());
  if (audit_) {
    const bool reads = absl::StartsWith(call.operation, "Describe") ||
                       absl::StartsWith(call.operation, "List");
    audit_(call.http, call.operation, !reads, result.status());
  }
  return AwsResponse(result);
}

absl::StatusOr<std::string> SageMakerApi::Serve(
    const Call& call, absl::string_view target) const {
  if (target == "CreateTrainingJob") return Create(call);
  if (target == "DescribeTrainingJob") return Describe(call);
  if (target == "ListTrainingJobs") return List(call);
  if (target == "StopTrainingJob") return Stop(call);
  if (target == "CreateHyperParameterTuningJob") return CreateTuning(call);
  if (target == "DescribeHyperParameterTuningJob") return DescribeTuning(call);
  if (target == "ListHyperParameterTuningJobs") return ListTuning(call);
  if (target == "StopHyperParameterTuningJob") return StopTuning(call);
  if (target == "ListTrainingJobsForHyperParameterTuningJob") {
    return ListTuningJobs(call);
  }
  if (target == "AddTags") return AddTags(call);
  if (target == "ListTags") return ListTags(call);
  if (target == "DeleteTags") return DeleteTags(call);
  return absl::UnimplementedError(
      absl::StrCat("operation '", call.operation,
                   "' is not one Cairn serves (X-Amz-Target)"));
}

absl::StatusOr<std::string> SageMakerApi::Create(const Call& call) const {
  auto request = sagemaker::ParseCreateTrainingJob(call.http.body);
  if (!request.ok()) return request.status();
  if (absl::Status s = CheckLocations(objects_, *request); !s.ok()) return s;
  cairn::v1::CreateStudyRequest create;
  *create.mutable_study() = sagemaker::TrainingJobStudy(*request);
  auto study = Rpc(stub_.get(), call.http, &Stub::CreateStudy, create);
  if (!study.ok() &&
      study.status().code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        absl::StrCat("TrainingJobName '", request->training_job_name(),
                     "': a training job (or study) of that name exists"));
  }
  if (!study.ok()) return study.status();
  // The job runner suggests the study's one trial and runs it (creating it
  // here too would race the runner for max_trials 1).
  return json({{"TrainingJobArn",
                sagemaker::TrainingJobArn(request->training_job_name())}})
      .dump();
}

absl::StatusOr<std::string> SageMakerApi::Describe(const Call& call) const {
  absl::StatusOr<std::string> name = JobNameOf(call.http.body);
  if (!name.ok()) return name.status();
  absl::StatusOr<JobRecord> job = FindAnyJob(stub_.get(), call.http, *name);
  if (!job.ok()) return job.status();
  if (job->trial) {
    // Its measurements: a stopped job's final metrics may be among them.
    auto measured = WithMeasurements(stub_.get(), call.http, *job->trial);
    if (!measured.ok()) return measured.status();
    job->trial = *std::move(measured);
  }
  if (!job->of_tuning_job) {
    return sagemaker::DescribeTrainingJobJson(
               job->study, job->trial ? &*job->trial : nullptr)
        .dump();
  }
  auto out = sagemaker::DescribeTuningTrainingJobJson(job->study, *job->trial);
  if (!out.ok()) return out.status();
  return out->dump();
}

// The TrainingJobSummary of each of `study`'s training jobs: its one job,
// or a tuning job's (not a warm start's prior trials).
static absl::Status AddSummaries(Stub* stub, const HttpRequest& http,
                                 const cairn::v1::Study& study,
                                 std::vector<json>* summaries) {
  if (!sagemaker::IsTuningJobStudy(study)) {
    auto trial = TrialOf(stub, http, study.name());
    if (!trial.ok()) return trial.status();
    summaries->push_back(
        sagemaker::TrainingJobSummaryJson(study, *trial ? &**trial : nullptr));
    return absl::OkStatus();
  }
  cairn::v1::ListTrialsRequest list;
  list.set_parent(study.name());
  auto trials = Rpc(stub, http, &Stub::ListTrials, list);
  if (!trials.ok()) return trials.status();
  for (const cairn::v1::Trial& trial : trials->trials()) {
    if (sagemaker::IsWarmStartTrial(trial)) continue;
    auto job = sagemaker::TuningTrainingJobStudy(study, trial);
    if (!job.ok()) return job.status();
    summaries->push_back(sagemaker::TrainingJobSummaryJson(*job, &trial));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SageMakerApi::List(const Call& call) const {
  absl::StatusOr<sagemaker::ListQuery> query = sagemaker::ParseListQuery(
      call.http.body, sagemaker::ListKind::kTrainingJobs);
  if (!query.ok()) return query.status();
  auto studies = AllStudies(stub_.get(), call.http);
  if (!studies.ok()) return studies.status();
  std::vector<json> summaries;
  for (const cairn::v1::Study& study : *studies) {
    if (!study.spec().has_sagemaker_training_job()) continue;
    absl::Status s = AddSummaries(stub_.get(), call.http, study, &summaries);
    if (!s.ok()) return s;
  }
  return PageBody(std::move(summaries), *query, "TrainingJobSummaries");
}

absl::StatusOr<std::string> SageMakerApi::Stop(const Call& call) const {
  absl::StatusOr<std::string> name = JobNameOf(call.http.body);
  if (!name.ok()) return name.status();
  // A tuning job's training job too: its trial stops alone.
  absl::StatusOr<JobRecord> job = FindAnyJob(stub_.get(), call.http, *name);
  if (!job.ok()) return job.status();
  const std::string status =
      sagemaker::JobStatus(job->study, job->trial ? &*job->trial : nullptr);
  if (status != "InProgress" && status != "Stopping") {
    return sagemaker::InvalidField(
        "TrainingJobName", *name,
        absl::StrCat("the job is ", status, ", not InProgress"));
  }
  if (!job->trial) {
    // Not started: pausing the study keeps the runner from starting it.
    // The runner may have made the trial meanwhile: look again.
    cairn::v1::SetStudyStateRequest pause;
    pause.set_name(job->study.name());
    pause.set_state(cairn::v1::Study::INACTIVE);
    auto paused = Rpc(stub_.get(), call.http, &Stub::SetStudyState, pause);
    if (!paused.ok()) return paused.status();
    job = FindJob(stub_.get(), call.http, *name);
    if (!job.ok()) return job.status();
    if (!job->trial) return std::string("{}");  // Stopped before it began.
  }
  absl::Status s = StopJobTrial(stub_.get(), call.http, *job->trial);
  // FailedPrecondition: the pause above already ended the new trial.
  if (!s.ok() && s.code() != absl::StatusCode::kFailedPrecondition) return s;
  return std::string("{}");
}

}  // namespace cairn::http
