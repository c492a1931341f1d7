// See sagemaker_api.h.
#include "http/sagemaker_api.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "http/rest_json.h"
#include "nlohmann/json.hpp"
#include "sagemaker/aws_error.h"
#include "sagemaker/container_files.h"
#include "sagemaker/list_query.h"
#include "sagemaker/training_job_request.h"
#include "sagemaker/training_job_view.h"
#include "sagemaker/tuning_job_request.h"
#include "sagemaker/tuning_job_view.h"
#include "sagemaker/warm_start.h"

namespace cairn::http {

using cairn::v1::StudyService;
using nlohmann::json;

struct SageMakerApi::Call {
  HttpRequest http;  // with authorization = the gRPC bearer
  std::string operation;
};

namespace {

using Stub = StudyService::StubInterface;

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

template <typename Req, typename Resp>
absl::StatusOr<Resp> Rpc(Stub* stub, const HttpRequest& http,
                         grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                      const Req&, Resp*),
                         const Req& req) {
  grpc::ClientContext context;
  PrepareCall(http, &context);
  Resp resp;
  const grpc::Status status = (stub->*method)(&context, req, &resp);
  if (!status.ok()) return FromGrpc(status);
  return resp;
}

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

// Every input of `r` must resolve in the object root (or be a local
// directory, for FileSystemDataSource).
absl::Status CheckLocations(
    const sagemaker::ObjectRoot& objects,
    const cairn::v1::SageMakerCreateTrainingJobRequest& r) {
  for (const auto& c : r.input_data_config()) {
    absl::StatusOr<std::string> p = objects.ResolveChannel(c);
    if (!p.ok()) return p.status();
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

// The study and trial of training job `name`; NotFound (ResourceNotFound)
// if there is none.
struct JobRecord {
  cairn::v1::Study study;
  std::optional<cairn::v1::Trial> trial;
};

absl::StatusOr<std::optional<cairn::v1::Trial>> TrialOf(
    Stub* stub, const HttpRequest& http, const std::string& study) {
  cairn::v1::ListTrialsRequest req;
  req.set_parent(study);
  auto trials = Rpc(stub, http, &Stub::ListTrials, req);
  if (!trials.ok()) return trials.status();
  if (trials->trials_size() == 0) return std::nullopt;
  return trials->trials(0);
}

absl::StatusOr<JobRecord> FindJob(Stub* stub, const HttpRequest& http,
                                  const std::string& name) {
  cairn::v1::LookupStudyRequest req;
  req.set_display_name(name);
  auto study = Rpc(stub, http, &Stub::LookupStudy, req);
  if (!study.ok() && study.status().code() != absl::StatusCode::kNotFound) {
    return study.status();
  }
  if (!study.ok() || !study->spec().has_sagemaker_training_job() ||
      sagemaker::IsTuningJobStudy(*study)) {
    return absl::NotFoundError(absl::StrCat(
        "Requested resource not found: training job '", name, "'"));
  }
  auto trial = TrialOf(stub, http, study->name());
  if (!trial.ok()) return trial.status();
  return JobRecord{*std::move(study), *std::move(trial)};
}

// The study and trials of tuning job `name` from a Describe, List or Stop
// body {"HyperParameterTuningJobName": NAME}.
struct TuningRecord {
  cairn::v1::Study study;
  std::vector<cairn::v1::Trial> trials;
};

absl::StatusOr<TuningRecord> FindTuningJobNamed(Stub* stub,
                                                const HttpRequest& http,
                                                const std::string& name) {
  cairn::v1::LookupStudyRequest req;
  req.set_display_name(name);
  auto study = Rpc(stub, http, &Stub::LookupStudy, req);
  if (!study.ok() && study.status().code() != absl::StatusCode::kNotFound) {
    return study.status();
  }
  if (!study.ok() || !sagemaker::IsTuningJobStudy(*study)) {
    return absl::NotFoundError(
        absl::StrCat("Requested resource not found: tuning job '", name, "'"));
  }
  TuningRecord record{*std::move(study), {}};
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

// Every study, across ListStudies pages.
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

// The page of `summaries` that `query` selects, as {member: [...],
// NextToken}.
std::string PageBody(std::vector<json> summaries,
                     const sagemaker::ListQuery& query, const char* member) {
  sagemaker::ListPage page = sagemaker::SelectPage(std::move(summaries), query);
  json out = {{member, page.summaries}};
  if (!page.next_token.empty()) out["NextToken"] = page.next_token;
  return out.dump();
}

// Stops the training job run by `trial`: the job runner then ends its
// container (SIGTERM, then SIGKILL after the grace); the job is Stopped
// from now on.
absl::Status StopJobTrial(Stub* stub, const HttpRequest& http,
                          const cairn::v1::Trial& trial) {
  cairn::v1::StopTrialRequest stop;
  stop.set_name(trial.name());
  auto stopped = Rpc(stub, http, &Stub::StopTrial, stop);
  if (!stopped.ok()) return stopped.status();
  cairn::v1::CompleteTrialRequest complete;
  complete.set_name(trial.name());
  complete.set_trial_infeasible(true);
  complete.set_infeasible_reason(sagemaker::kStoppedReason);
  return Rpc(stub, http, &Stub::CompleteTrial, complete).status();
}

sagemaker::TuningObjective ObjectiveOf(const cairn::v1::Study& study) {
  auto label = study.spec().labels().find(sagemaker::kObjectiveLabel);
  return {
      label == study.spec().labels().end() ? "" : label->second,
      study.spec().metrics_size() == 0 ||
          study.spec().metrics(0).goal() == cairn::v1::MetricSpec::MINIMIZE};
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
  if (ours && target == "CreateTrainingJob") return AwsResponse(Create(call));
  if (ours && target == "DescribeTrainingJob") {
    return AwsResponse(Describe(call));
  }
  if (ours && target == "ListTrainingJobs") return AwsResponse(List(call));
  if (ours && target == "StopTrainingJob") return AwsResponse(Stop(call));
  if (ours && target == "CreateHyperParameterTuningJob") {
    return AwsResponse(CreateTuning(call));
  }
  if (ours && target == "DescribeHyperParameterTuningJob") {
    return AwsResponse(DescribeTuning(call));
  }
  if (ours && target == "ListHyperParameterTuningJobs") {
    return AwsResponse(ListTuning(call));
  }
  if (ours && target == "StopHyperParameterTuningJob") {
    return AwsResponse(StopTuning(call));
  }
  if (ours && target == "ListTrainingJobsForHyperParameterTuningJob") {
    return AwsResponse(ListTuningJobs(call));
  }
  return AwsResponse(absl::UnimplementedError(
      absl::StrCat("operation '", call.operation,
                   "' is not one Cairn serves (X-Amz-Target)")));
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
  absl::StatusOr<JobRecord> job = FindJob(stub_.get(), call.http, *name);
  if (!job.ok()) return job.status();
  return sagemaker::DescribeTrainingJobJson(job->study,
                                            job->trial ? &*job->trial : nullptr)
      .dump();
}

absl::StatusOr<std::string> SageMakerApi::List(const Call& call) const {
  absl::StatusOr<sagemaker::ListQuery> query =
      sagemaker::ParseListQuery(call.http.body);
  if (!query.ok()) return query.status();
  auto studies = AllStudies(stub_.get(), call.http);
  if (!studies.ok()) return studies.status();
  std::vector<json> summaries;
  for (const cairn::v1::Study& study : *studies) {
    if (!study.spec().has_sagemaker_training_job() ||
        sagemaker::IsTuningJobStudy(study)) {
      continue;
    }
    auto trial = TrialOf(stub_.get(), call.http, study.name());
    if (!trial.ok()) return trial.status();
    summaries.push_back(
        sagemaker::TrainingJobSummaryJson(study, *trial ? &**trial : nullptr));
  }
  return PageBody(std::move(summaries), *query, "TrainingJobSummaries");
}

absl::StatusOr<std::string> SageMakerApi::Stop(const Call& call) const {
  absl::StatusOr<std::string> name = JobNameOf(call.http.body);
  if (!name.ok()) return name.status();
  absl::StatusOr<JobRecord> job = FindJob(stub_.get(), call.http, *name);
  // A job just created may wait a runner pass (20 ms) for its trial.
  for (int i = 0; i < 100 && job.ok() && !job->trial; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
    job = FindJob(stub_.get(), call.http, *name);
  }
  if (!job.ok()) return job.status();
  const std::string status =
      sagemaker::TrainingJobStatus(job->trial ? &*job->trial : nullptr);
  if (!job->trial || (status != "InProgress" && status != "Stopping")) {
    return sagemaker::InvalidField(
        "TrainingJobName", *name,
        absl::StrCat("the job is ", status, ", not InProgress"));
  }
  if (absl::Status s = StopJobTrial(stub_.get(), call.http, *job->trial);
      !s.ok()) {
    return s;
  }
  return std::string("{}");
}

absl::StatusOr<std::string> SageMakerApi::ListTuning(const Call& call) const {
  absl::StatusOr<sagemaker::ListQuery> query =
      sagemaker::ParseListQuery(call.http.body);
  if (!query.ok()) return query.status();
  query->name_key = "HyperParameterTuningJobName";
  query->status_key = "HyperParameterTuningJobStatus";
  auto studies = AllStudies(stub_.get(), call.http);
  if (!studies.ok()) return studies.status();
  std::vector<json> summaries;
  for (const cairn::v1::Study& study : *studies) {
    if (!sagemaker::IsTuningJobStudy(study)) continue;
    cairn::v1::ListTrialsRequest list;
    list.set_parent(study.name());
    auto trials = Rpc(stub_.get(), call.http, &Stub::ListTrials, list);
    if (!trials.ok()) return trials.status();
    json s = sagemaker::TuningCounters(
        {trials->trials().begin(), trials->trials().end()}, ObjectiveOf(study));
    s[query->name_key] = study.display_name();
    s["HyperParameterTuningJobArn"] =
        sagemaker::TuningJobArn(study.display_name());
    s[query->status_key] = sagemaker::TuningJobStatus(study);
    s["CreationTime"] = study.create_time().seconds();
    s["ResourceLimits"] = sagemaker::ResourceLimitsJson(
        study, {trials->trials().begin(), trials->trials().end()});
    summaries.push_back(std::move(s));
  }
  return PageBody(std::move(summaries), *query,
                  "HyperParameterTuningJobSummaries");
}

absl::StatusOr<std::string> SageMakerApi::StopTuning(const Call& call) const {
  auto job = FindTuningJob(stub_.get(), call.http, call.http.body);
  if (!job.ok()) return job.status();
  if (job->study.state() != cairn::v1::Study::ACTIVE) {
    return sagemaker::InvalidField(
        "HyperParameterTuningJobName", job->study.display_name(),
        absl::StrCat("the tuning job is ",
                     sagemaker::TuningJobStatus(job->study),
                     ", not InProgress"));
  }
  // No new training jobs first, then the running ones end.
  cairn::v1::SetStudyStateRequest pause;
  pause.set_name(job->study.name());
  pause.set_state(cairn::v1::Study::INACTIVE);
  auto paused = Rpc(stub_.get(), call.http, &Stub::SetStudyState, pause);
  if (!paused.ok()) return paused.status();
  for (const cairn::v1::Trial& trial : job->trials) {
    if (sagemaker::TrainingJobStatus(&trial) != "InProgress") continue;
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
  const sagemaker::TuningObjective objective = ObjectiveOf(job->study);
  json out = sagemaker::TuningCounters(job->trials, objective);
  out["HyperParameterTuningJobName"] = job->study.display_name();
  out["HyperParameterTuningJobArn"] =
      sagemaker::TuningJobArn(job->study.display_name());
  out["HyperParameterTuningJobStatus"] = sagemaker::TuningJobStatus(job->study);
  out["CreationTime"] = job->study.create_time().seconds();
  json best = sagemaker::BestTrainingJob(
      job->trials, objective, job->study.display_name(), job->study.name());
  if (!best.is_null()) out["BestTrainingJob"] = best;
  out["HyperParameterTuningJobConfig"] = {
      {"ResourceLimits",
       sagemaker::ResourceLimitsJson(job->study, job->trials)}};
  json warm = sagemaker::WarmStartConfigJson(job->study);
  if (!warm.is_null()) out["WarmStartConfig"] = warm;
  return out.dump();
}

absl::StatusOr<std::string> SageMakerApi::ListTuningJobs(
    const Call& call) const {
  auto job = FindTuningJob(stub_.get(), call.http, call.http.body);
  if (!job.ok()) return job.status();
  json summaries = json::array();
  for (const cairn::v1::Trial& trial : job->trials) {
    if (sagemaker::IsWarmStartTrial(trial)) continue;
    auto request = sagemaker::TrialTrainingRequest(job->study, trial);
    if (!request.ok()) return request.status();
    json tuned = json::object();
    for (const cairn::v1::Parameter& p : trial.parameters()) {
      tuned[p.parameter_id()] =
          request->hyper_parameters().at(p.parameter_id());
    }
    summaries.push_back(
        {{"TrainingJobName", request->training_job_name()},
         {"TrainingJobArn",
          sagemaker::TrainingJobArn(request->training_job_name())},
         {"TuningJobName", job->study.display_name()},
         {"TrainingJobStatus", sagemaker::TrainingJobStatus(&trial)},
         {"CreationTime", trial.start_time().seconds()},
         {"TunedHyperParameters", tuned}});
  }
  return json({{"TrainingJobSummaries", summaries}}).dump();
}

}  // namespace cairn::http
