#include "http/rest_api.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/formats/trials_csv.h"
#include "grpcpp/client_context.h"
#include "http/rest_json.h"
#include "nlohmann/json.hpp"
#include "tuner/parameter_importance.h"

namespace cairn::http {
namespace {

using cairn::v1::StudyService;

// Parses the query and body into `req` (the body only for POST), then
// `set_names` fills the fields the path names, then calls `method`.
template <typename Req, typename Resp, typename SetNames>
HttpResponse Call(StudyService::StubInterface* stub, const HttpRequest& http,
                  grpc::Status (StudyService::StubInterface::*method)(
                      grpc::ClientContext*, const Req&, Resp*),
                  SetNames set_names) {
  Req req;
  absl::Status s =
      http.method == "POST" ? ParseJsonBody(http.body, &req) : absl::OkStatus();
  if (s.ok()) s = ParseQuery(http.query, &req);
  if (!s.ok()) return ErrorResponse(s);
  set_names(req);
  return CallRpc(stub, http, method, req);
}

}  // namespace

HttpResponse RestApi::Handle(const HttpRequest& request) const {
  std::vector<std::string> parts = absl::StrSplit(
      absl::string_view(request.path).substr(4), '/', absl::SkipEmpty());
  if (parts.empty() || !absl::StartsWith(parts[0], "studies")) {
    return RouteNotFound(request);
  }
  return Studies(request, parts);
}

HttpResponse RestApi::Studies(const HttpRequest& r,
                              const std::vector<std::string>& parts) const {
  using SS = StudyService::StubInterface;
  auto* stub = stub_.get();
  if (parts.size() == 1 && parts[0] == "studies") {
    if (r.method == "GET") {
      return Call(stub, r, &SS::ListStudies, [](auto&) {});
    }
    if (r.method == "POST") {
      return Call(stub, r, &SS::CreateStudy, [](auto&) {});
    }
    return RouteNotFound(r);
  }
  if (parts[0] != "studies") return RouteNotFound(r);
  const auto [id, verb] = SplitVerb(parts[1]);
  const std::string name = absl::StrCat("studies/", id);
  if (parts.size() == 2) {
    if (r.method == "GET" && verb.empty()) {
      return Call(stub, r, &SS::GetStudy, [&](auto& q) { q.set_name(name); });
    }
    if (r.method == "DELETE" && verb.empty()) {
      return Call(stub, r, &SS::DeleteStudy,
                  [&](auto& q) { q.set_name(name); });
    }
    if (r.method == "POST" && verb == "setState") {
      return Call(stub, r, &SS::SetStudyState,
                  [&](auto& q) { q.set_name(name); });
    }
    return RouteNotFound(r);
  }
  if (!verb.empty()) return RouteNotFound(r);
  if (parts.size() == 3 && parts[2] == "optimalTrials" && r.method == "GET") {
    return Call(stub, r, &SS::ListOptimalTrials,
                [&](auto& q) { q.set_parent(name); });
  }
  if (parts.size() == 3 && parts[2] == "parameterImportance" &&
      r.method == "GET") {
    return ParameterImportance(r, name);
  }
  return Trials(r, name, parts);
}

HttpResponse RestApi::Trials(const HttpRequest& r, const std::string& study,
                             const std::vector<std::string>& parts) const {
  using SS = StudyService::StubInterface;
  auto* stub = stub_.get();
  const auto [collection, verb] = SplitVerb(parts[2]);
  if (collection != "trials") return RouteNotFound(r);
  if (parts.size() == 3) {
    if (r.method == "GET" && verb.empty()) {
      if (QueryValue(r.query, "format") == "csv") return TrialsCsv(r, study);
      return Call(stub, r, &SS::ListTrials,
                  [&](auto& q) { q.set_parent(study); });
    }
    if (r.method == "POST" && verb.empty()) {
      return Call(stub, r, &SS::CreateTrial,
                  [&](auto& q) { q.set_parent(study); });
    }
    if (r.method == "POST" && verb == "suggest") {
      return Call(stub, r, &SS::SuggestTrials,
                  [&](auto& q) { q.set_parent(study); });
    }
    return RouteNotFound(r);
  }
  if (!verb.empty()) return RouteNotFound(r);
  const auto [id, trial_verb] = SplitVerb(parts[3]);
  return OneTrial(r, absl::StrCat(study, "/trials/", id), trial_verb, parts);
}

HttpResponse RestApi::OneTrial(const HttpRequest& r, const std::string& trial,
                               const std::string& verb,
                               const std::vector<std::string>& parts) const {
  using SS = StudyService::StubInterface;
  auto* stub = stub_.get();
  auto set_name = [&](auto& q) { q.set_name(trial); };
  if (parts.size() == 4) {
    if (r.method == "GET" && verb.empty()) {
      return Call(stub, r, &SS::GetTrial, set_name);
    }
    if (r.method == "DELETE" && verb.empty()) {
      return Call(stub, r, &SS::DeleteTrial, set_name);
    }
    if (r.method != "POST") return RouteNotFound(r);
    if (verb == "stop") return Call(stub, r, &SS::StopTrial, set_name);
    if (verb == "complete") return Call(stub, r, &SS::CompleteTrial, set_name);
    if (verb == "addMeasurement") {
      return Call(stub, r, &SS::AddTrialMeasurement,
                  [&](auto& q) { q.set_trial_name(trial); });
    }
    return RouteNotFound(r);
  }
  if (parts.size() != 5 || !verb.empty() || r.method != "GET") {
    return RouteNotFound(r);
  }
  if (parts[4] == "metricHistory") {
    return Call(stub, r, &SS::GetMetricHistory,
                [&](auto& q) { q.set_trial_name(trial); });
  }
  if (parts[4] == "logs") return Call(stub, r, &SS::ReadTrialLogs, set_name);
  return RouteNotFound(r);
}

grpc::Status RestApi::FetchStudy(const HttpRequest& r, const std::string& study,
                                 cairn::v1::Study* out,
                                 std::vector<cairn::v1::Trial>* trials) const {
  {
    grpc::ClientContext context;
    PrepareCall(r, &context);
    cairn::v1::GetStudyRequest get;
    get.set_name(study);
    const grpc::Status status = stub_->GetStudy(&context, get, out);
    if (!status.ok()) return status;
  }
  cairn::v1::ListTrialsRequest request;
  request.set_parent(study);
  do {
    grpc::ClientContext context;
    PrepareCall(r, &context);
    cairn::v1::ListTrialsResponse page;
    const grpc::Status status = stub_->ListTrials(&context, request, &page);
    if (!status.ok()) return status;
    for (auto& t : *page.mutable_trials()) trials->push_back(std::move(t));
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

HttpResponse RestApi::TrialsCsv(const HttpRequest& r,
                                const std::string& study) const {
  cairn::v1::Study spec_holder;
  std::vector<cairn::v1::Trial> trials;
  const grpc::Status status = FetchStudy(r, study, &spec_holder, &trials);
  if (!status.ok()) return ErrorResponse(status);
  HttpResponse response;
  response.content_type = "text/csv; charset=utf-8";
  response.body = api::formats::TrialsCsv(trials, spec_holder.spec());
  return response;
}

HttpResponse RestApi::ParameterImportance(const HttpRequest& r,
                                          const std::string& study) const {
  cairn::v1::Study spec_holder;
  std::vector<cairn::v1::Trial> trials;
  const grpc::Status status = FetchStudy(r, study, &spec_holder, &trials);
  if (!status.ok()) return ErrorResponse(status);
  absl::StatusOr<tuner::ImportanceReport> report =
      tuner::ComputeParameterImportance(spec_holder.spec(), trials,
                                        QueryValue(r.query, "metric_id"));
  if (!report.ok()) return ErrorResponse(report.status());
  nlohmann::json out = {{"metricId", report->metric_id},
                        {"method", "fanova-random-forest"},
                        {"trialCount", report->trial_count},
                        {"parameters", nlohmann::json::array()}};
  for (const auto& p : report->parameters) {
    out["parameters"].push_back(
        {{"parameterId", p.parameter_id}, {"importance", p.importance}});
  }
  HttpResponse response;
  response.body = out.dump();
  return response;
}

}  // namespace cairn::http
