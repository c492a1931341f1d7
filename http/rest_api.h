// RestApi: the JSON REST API over the gRPC StudyService. Each route turns
// the URL, query and body into the gRPC request message (protobuf JSON
// mapping) and makes the call through `stub`, which cairnd connects to its
// own gRPC server in-process: authorization (the caller's
// "Authorization: Bearer" header becomes the call's metadata), input
// limits, audit and metrics are those of gRPC, in one place.
//
// Routes (all under /v1; {s} a study id, {t} a trial id):
//   GET    studies                          ListStudies (page_size, page_token)
//   POST   studies                          CreateStudy (body:
//   CreateStudyRequest) GET    studies/{s}                      GetStudy DELETE
//   studies/{s}                      DeleteStudy POST   studies/{s}:setState
//   SetStudyState (body: {"state"}) GET    studies/{s}/optimalTrials
//   ListOptimalTrials GET    studies/{s}/trials               ListTrials
//   (page_size, page_token,
//                                           include_measurements); format=csv:
//                                           every trial as CSV (trials_csv.h)
//   POST   studies/{s}/trials               CreateTrial (body:
//   CreateTrialRequest) POST   studies/{s}/trials:suggest       SuggestTrials
//   GET    studies/{s}/trials/{t}           GetTrial
//   DELETE studies/{s}/trials/{t}           DeleteTrial
//   POST   studies/{s}/trials/{t}:stop      StopTrial
//   POST   studies/{s}/trials/{t}:complete  CompleteTrial
//   POST   studies/{s}/trials/{t}:addMeasurement  AddTrialMeasurement
//   GET    studies/{s}/trials/{t}/metricHistory   GetMetricHistory (metric_id,
//                                           page_size, page_token, max_points,
//                                           start_step, end_step)
//   GET    studies/{s}/trials/{t}/logs      ReadTrialLogs (offset, max_bytes)
//   GET    studies/{s}/parameterImportance  GetStudy + ListTrials, then
//                                           tuner/parameter_importance.h
//                                           (metric_id; default the first)
// Names in bodies are overridden by the path. Errors: rest_json.h.
#ifndef CAIRN_HTTP_REST_API_H_
#define CAIRN_HTTP_REST_API_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "http/http_server.h"

namespace cairn::http {

// Thread-safe.
class RestApi {
 public:
  explicit RestApi(std::unique_ptr<cairn::v1::StudyService::StubInterface> stub)
      : stub_(std::move(stub)) {}

  // `request.path` starts with "/v1/".
  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpResponse Studies(const HttpRequest& request,
                       const std::vector<std::string>& parts) const;
  HttpResponse Trials(const HttpRequest& request, const std::string& study,
                      const std::vector<std::string>& parts) const;
  HttpResponse OneTrial(const HttpRequest& request, const std::string& trial,
                        const std::string& verb,
                        const std::vector<std::string>& parts) const;
  HttpResponse TrialsCsv(const HttpRequest& request,
                         const std::string& study) const;
  HttpResponse ParameterImportance(const HttpRequest& request,
                                   const std::string& study) const;
  // GetStudy and every page of ListTrials of `study`, as the caller.
  grpc::Status FetchStudy(const HttpRequest& request, const std::string& study,
                          cairn::v1::Study* out,
                          std::vector<cairn::v1::Trial>* trials) const;

  const std::unique_ptr<cairn::v1::StudyService::StubInterface> stub_;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_REST_API_H_
