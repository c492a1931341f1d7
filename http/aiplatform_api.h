// AiPlatformApi: AI Platform Training's own REST surface (service "ml",
// version "v1"), so clients written for it (Google's googleapiclient, as TFX
// and ZenML use it) work against cairnd. Like RestApi, each route turns the
// request into a gRPC request and calls cairnd's own JobService in-process
// (`stub`), so tokens, roles, input limits, audit and metrics are gRPC's.
//
// Routes ({p} a project name, {j} a job id):
//   POST /v1/projects/{p}/jobs            SubmitTrainingJob (body: a Job:
//        jobId, labels, trainingInput; packageUris are archives on
//        cairnd's machine); {p} is recorded as the job's label
//        aiplatform_project (aiplatform/job_rest.h)
//   GET  /v1/projects/{p}/jobs/{j}        GetJob
//   GET  /v1/projects/{p}/jobs            ListJobs (?filter=state=STATE,
//        pageSize: default 20, at most 100; pageToken)
//   POST /v1/projects/{p}/jobs/{j}:cancel CancelJob; answers {} (Empty)
//   GET  /v1/projects/{p}/jobs/{j}/logs   ReadJobLogs (Cairn's own, not AI
//        Platform's: trialId, offset, maxBytes, replica; data in base64)
// Reads see every job whatever {p}: one cairnd serves one namespace of job
// ids. Errors: Google's JSON error shape (rest_json.h).
//
// The discovery document such clients load first (http/discovery/, no
// token needed), with rootUrl the address the client reached.
#ifndef CAIRN_HTTP_AIPLATFORM_API_H_
#define CAIRN_HTTP_AIPLATFORM_API_H_

#include <memory>
#include <string>
#include <vector>

#include "cairn/v1/job_service.grpc.pb.h"
#include "http/http_server.h"

namespace cairn::http {

// Thread-safe.
class AiPlatformApi {
 public:
  explicit AiPlatformApi(
      std::unique_ptr<cairn::v1::JobService::StubInterface> stub)
      : stub_(std::move(stub)) {}

  // Whether `request` is for the discovery document: GET
  // /discovery/v1/apis/ml/v1/rest, or /$discovery/rest with version v1
  // (or none).
  static bool IsDiscovery(const HttpRequest& request);
  // The discovery document, rootUrl from the request's Host header and
  // scheme. 400 without a usable Host header.
  HttpResponse Discovery(const HttpRequest& request) const;

  // `request.path` starts with "/v1/projects/".
  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpResponse Create(const HttpRequest& request,
                      const std::string& project) const;
  HttpResponse List(const HttpRequest& request) const;
  HttpResponse OneJob(const HttpRequest& request, const std::string& id,
                      const std::string& verb) const;
  HttpResponse Logs(const HttpRequest& request, const std::string& id) const;

  const std::unique_ptr<cairn::v1::JobService::StubInterface> stub_;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_AIPLATFORM_API_H_
