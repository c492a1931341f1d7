// Thin gRPC adapter over StudyManager.
#include "server/study_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "server/authorize_call.h"
#include "server/check_limits.h"
#include "server/read_logs.h"
#include "server/status_util.h"

namespace cairn {
namespace {

// Measurements from one stream are written in batches of this size; all of
// them are durable before the response is sent.
constexpr size_t kStreamBatch = 1024;

}  // namespace

absl::Status StudyServiceImpl::CheckMayDelete(
    const auth::Principal& caller, absl::string_view what,
    absl::string_view study_name) const {
  if (caller.role == cairn::v1::ADMIN) return absl::OkStatus();
  absl::StatusOr<cairn::v1::Study> study =
      manager_->GetStudy(std::string(study_name));
  if (!study.ok()) return study.status();
  return auth::CheckMayDelete(caller, what, study->creator());
}

absl::StatusOr<auth::Principal> StudyServiceImpl::Authorize(
    grpc::ServerContext* context, absl::string_view method,
    absl::string_view resource) const {
  return AuthorizeCall(authorizer_, context,
                       absl::StrCat("/cairn.v1.StudyService/", method),
                       resource);
}

grpc::Status StudyServiceImpl::CreateStudy(
    grpc::ServerContext* context, const cairn::v1::CreateStudyRequest* request,
    cairn::v1::Study* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "CreateStudy", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  cairn::v1::Study study = request->study();
  study.set_creator(caller->name);
  return Reply(manager_->CreateStudy(study), response);
}

grpc::Status StudyServiceImpl::GetStudy(
    grpc::ServerContext* context, const cairn::v1::GetStudyRequest* request,
    cairn::v1::Study* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "GetStudy", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->GetStudy(request->name()), response);
}

grpc::Status StudyServiceImpl::ListStudies(
    grpc::ServerContext* context, const cairn::v1::ListStudiesRequest* request,
    cairn::v1::ListStudiesResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "ListStudies", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<StudyPage> page =
      manager_->ListStudies(request->page_size(), request->page_token());
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (auto& s : page->studies) *response->add_studies() = std::move(s);
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::LookupStudy(
    grpc::ServerContext* context, const cairn::v1::LookupStudyRequest* request,
    cairn::v1::Study* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "LookupStudy", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->LookupStudy(request->display_name()), response);
}

grpc::Status StudyServiceImpl::DeleteStudy(
    grpc::ServerContext* context, const cairn::v1::DeleteStudyRequest* request,
    google::protobuf::Empty*) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "DeleteStudy", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  if (absl::Status s =
          CheckMayDelete(*caller, request->name(), request->name());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(manager_->DeleteStudy(request->name()));
}

grpc::Status StudyServiceImpl::SetStudyState(
    grpc::ServerContext* context,
    const cairn::v1::SetStudyStateRequest* request,
    cairn::v1::Study* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "SetStudyState", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->SetStudyState(request->name(), request->state()),
               response);
}

grpc::Status StudyServiceImpl::UpdateStudyLabels(
    grpc::ServerContext* context,
    const cairn::v1::UpdateStudyLabelsRequest* request,
    cairn::v1::Study* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "UpdateStudyLabels", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->UpdateStudyLabels(request->name(), request->labels(),
                                           {request->remove_keys().begin(),
                                            request->remove_keys().end()}),
               response);
}

grpc::Status StudyServiceImpl::SuggestTrials(
    grpc::ServerContext* context,
    const cairn::v1::SuggestTrialsRequest* request,
    cairn::v1::SuggestTrialsResponse* response) {
  PhaseClock clock(observer_, "SuggestTrials");
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "SuggestTrials", "");
  clock.Lap(call_phase::kAuth);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  clock.Lap(call_phase::kLimits);
  const int count =
      request->suggestion_count() == 0 ? 1 : request->suggestion_count();
  absl::StatusOr<SuggestResult> result =
      manager_->SuggestTrials(request->parent(), count, request->client_id());
  if (!result.ok()) return ToGrpcStatus(result.status());
  for (auto& t : result->trials) *response->add_trials() = std::move(t);
  response->set_study_state(result->study_state);
  response->set_message(result->message);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::CreateTrial(
    grpc::ServerContext* context, const cairn::v1::CreateTrialRequest* request,
    cairn::v1::Trial* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "CreateTrial", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->CreateTrial(request->parent(), request->trial()),
               response);
}

grpc::Status StudyServiceImpl::GetTrial(
    grpc::ServerContext* context, const cairn::v1::GetTrialRequest* request,
    cairn::v1::Trial* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "GetTrial", request->name());
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->GetTrial(request->name()), response);
}

grpc::Status StudyServiceImpl::ListTrials(
    grpc::ServerContext* context, const cairn::v1::ListTrialsRequest* request,
    cairn::v1::ListTrialsResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "ListTrials", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<TrialPage> page = manager_->ListTrials(
      request->parent(), request->page_size(), request->page_token(),
      request->include_measurements());
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (auto& t : page->trials) *response->add_trials() = std::move(t);
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::DeleteTrial(
    grpc::ServerContext* context, const cairn::v1::DeleteTrialRequest* request,
    google::protobuf::Empty*) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "DeleteTrial", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<api::TrialName> trial =
      api::ParseTrialName(request->name(), "name");
  if (!trial.ok()) return ToGrpcStatus(trial.status());
  if (absl::Status s = CheckMayDelete(*caller, request->name(),
                                      api::StudyName(trial->study_id));
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  return ToGrpcStatus(manager_->DeleteTrial(request->name()));
}

grpc::Status StudyServiceImpl::AddTrialMeasurement(
    grpc::ServerContext* context,
    const cairn::v1::AddTrialMeasurementRequest* request,
    cairn::v1::Trial* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "AddTrialMeasurement", request->trial_name());
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(
      manager_->AddMeasurement(request->trial_name(), request->measurement()),
      response);
}

grpc::Status StudyServiceImpl::ReportMeasurements(
    grpc::ServerContext* context,
    grpc::ServerReader<cairn::v1::ReportMeasurementsRequest>* reader,
    cairn::v1::ReportMeasurementsResponse* response) {
  std::vector<MeasurementReport> batch;
  batch.reserve(kStreamBatch);
  int64_t written = 0;
  auto flush = [&]() -> absl::Status {
    absl::StatusOr<int64_t> n = manager_->AddMeasurements(batch);
    batch.clear();
    if (!n.ok()) {
      return absl::Status(
          n.status().code(),
          absl::StrCat(n.status().message(), " (", written,
                       " earlier measurements of this stream were written)"));
    }
    written += *n;
    return absl::OkStatus();
  };
  // Before the first read: a caller without a valid token must not hold
  // this thread waiting for a message. A job token's trial is checked on
  // every message below.
  absl::StatusOr<auth::Principal> caller = AuthorizeStreamCall(
      authorizer_, context, "/cairn.v1.StudyService/ReportMeasurements");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  cairn::v1::ReportMeasurementsRequest request;
  for (bool more = reader->Read(&request); more;
       more = reader->Read(&request)) {
    if (!caller->trial.empty() && request.trial_name() != caller->trial) {
      return ToGrpcStatus(absl::PermissionDeniedError(
          absl::StrCat("token '", caller->name, "' may only report on ",
                       caller->trial, " (", written,
                       " earlier measurements of this stream were "
                       "written)")));
    }
    if (absl::Status s = api::CheckRequestLimits(request); !s.ok()) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat(s.message(), " (", written,
                       " earlier measurements of this stream were written)")));
    }
    if (request.measurements_size() == 0) {
      batch.push_back(
          {request.trial_name(), std::move(*request.mutable_measurement())});
    }
    for (auto& m : *request.mutable_measurements()) {
      batch.push_back({request.trial_name(), std::move(m)});
    }
    if (batch.size() >= kStreamBatch) {
      if (absl::Status s = flush(); !s.ok()) return ToGrpcStatus(s);
    }
  }
  if (absl::Status s = flush(); !s.ok()) return ToGrpcStatus(s);
  response->set_measurements_written(written);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::CompleteTrial(
    grpc::ServerContext* context,
    const cairn::v1::CompleteTrialRequest* request,
    cairn::v1::Trial* response) {
  PhaseClock clock(observer_, "CompleteTrial");
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "CompleteTrial", request->name());
  clock.Lap(call_phase::kAuth);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  clock.Lap(call_phase::kLimits);
  std::optional<cairn::v1::Measurement> final_measurement;
  if (request->has_final_measurement()) {
    final_measurement = request->final_measurement();
  }
  return Reply(manager_->CompleteTrial(request->name(), final_measurement,
                                       request->trial_infeasible(),
                                       request->infeasible_reason()),
               response);
}

grpc::Status StudyServiceImpl::StopTrial(
    grpc::ServerContext* context, const cairn::v1::StopTrialRequest* request,
    cairn::v1::Trial* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "StopTrial", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(manager_->StopTrial(request->name()), response);
}

grpc::Status StudyServiceImpl::CheckTrialEarlyStoppingState(
    grpc::ServerContext* context,
    const cairn::v1::CheckTrialEarlyStoppingStateRequest* request,
    cairn::v1::CheckTrialEarlyStoppingStateResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "CheckTrialEarlyStoppingState", request->trial_name());
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  auto result = manager_->CheckEarlyStopping(request->trial_name());
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_should_stop(result->stop);
  response->set_reason(result->reason);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::ListOptimalTrials(
    grpc::ServerContext* context,
    const cairn::v1::ListOptimalTrialsRequest* request,
    cairn::v1::ListOptimalTrialsResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "ListOptimalTrials", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  auto trials = manager_->ListOptimalTrials(request->parent());
  if (!trials.ok()) return ToGrpcStatus(trials.status());
  for (auto& t : *trials) *response->add_optimal_trials() = std::move(t);
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::GetMetricHistory(
    grpc::ServerContext* context,
    const cairn::v1::GetMetricHistoryRequest* request,
    cairn::v1::GetMetricHistoryResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "GetMetricHistory", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  MetricHistoryQuery query;
  query.metric_id = request->metric_id();
  query.page_size = request->page_size();
  query.page_token = request->page_token();
  if (request->has_start_step())
    query.start_step = request->start_step().value();
  if (request->has_end_step()) query.end_step = request->end_step().value();
  query.max_points = request->max_points();
  auto history = manager_->GetMetricHistory(request->trial_name(), query);
  if (!history.ok()) return ToGrpcStatus(history.status());
  response->set_next_page_token(std::move(history->next_page_token));
  for (const auto& m : history->points) {
    cairn::v1::MetricPoint* p = response->add_points();
    p->set_step_count(m.step_count());
    *p->mutable_elapsed_duration() = m.elapsed_duration();
    p->set_value(m.metrics(0).value());
  }
  return grpc::Status::OK;
}

grpc::Status StudyServiceImpl::ReadTrialLogs(
    grpc::ServerContext* context,
    const cairn::v1::ReadTrialLogsRequest* request,
    cairn::v1::ReadTrialLogsResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "ReadTrialLogs", "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return ReadLogChunk(runner_, request->name(), request->offset(),
                      request->max_bytes(), request->replica(), response);
}

}  // namespace cairn
