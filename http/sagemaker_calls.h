// The StudyService calls that SageMaker's operations (sagemaker_api.cc,
// sagemaker_tuning_api.cc, sagemaker_tags_api.cc) share: finding a job's
// study and trials by name, listing studies, stopping a job's trial. Each
// call goes to cairnd's own StudyService as the caller's token, so its
// roles, limits and audit apply. Internal to cairn::http.
#ifndef CAIRN_HTTP_SAGEMAKER_CALLS_H_
#define CAIRN_HTTP_SAGEMAKER_CALLS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/sagemaker.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "http/http_server.h"
#include "http/rest_json.h"
#include "http/sagemaker_api.h"
#include "nlohmann/json.hpp"
#include "sagemaker/list_query.h"
#include "sagemaker/object_root.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::http {

struct SageMakerApi::Call {
  HttpRequest http;  // with authorization = the gRPC bearer
  std::string operation;
};

namespace sagemaker_calls {

using Stub = cairn::v1::StudyService::StubInterface;

inline absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

// `method` of the StudyService with the caller's credential from `http`.
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

// Every input of `r` must resolve in the object root (or be a local
// directory, for FileSystemDataSource); a ManifestFile channel's manifest
// and each object it lists are checked too (sagemaker/channel_mounts.h).
absl::Status CheckLocations(
    const sagemaker::ObjectRoot& objects,
    const cairn::v1::SageMakerCreateTrainingJobRequest& r);

// A training job's study and its trial (none before the runner made it);
// for a tuning job's training job, the tuning job's study and the trial.
struct JobRecord {
  cairn::v1::Study study;
  std::optional<cairn::v1::Trial> trial;
  bool of_tuning_job = false;
};

// The first trial of `study`, if any.
absl::StatusOr<std::optional<cairn::v1::Trial>> TrialOf(
    Stub* stub, const HttpRequest& http, const std::string& study);

// Training job `name`; NotFound (ResourceNotFound) if there is none.
absl::StatusOr<JobRecord> FindJob(Stub* stub, const HttpRequest& http,
                                  const std::string& name);

// A tuning job's study and trials.
struct TuningRecord {
  cairn::v1::Study study;
  std::vector<cairn::v1::Trial> trials;
};

// Tuning job `name`; NotFound (ResourceNotFound) if there is none.
absl::StatusOr<TuningRecord> FindTuningJobNamed(Stub* stub,
                                                const HttpRequest& http,
                                                const std::string& name);

// The training job `name` of a tuning job (TuningTrainingJobName's): its
// tuning job's study and its trial. NotFound if there is none.
absl::StatusOr<JobRecord> FindTuningTrainingJob(Stub* stub,
                                                const HttpRequest& http,
                                                const std::string& name);

// Training job `name`, a tuning job's training job included; NotFound
// (ResourceNotFound) if there is none.
absl::StatusOr<JobRecord> FindAnyJob(Stub* stub, const HttpRequest& http,
                                     const std::string& name);

// The tuning job of a Describe, List or Stop body
// {"HyperParameterTuningJobName": NAME}.
absl::StatusOr<TuningRecord> FindTuningJob(Stub* stub, const HttpRequest& http,
                                           const std::string& body);

// Every study, across ListStudies pages.
absl::StatusOr<std::vector<cairn::v1::Study>> AllStudies(
    Stub* stub, const HttpRequest& http);

// The page of `summaries` that `query` selects, as {member: [...],
// NextToken}.
std::string PageBody(std::vector<nlohmann::json> summaries,
                     const sagemaker::ListQuery& query, const char* member);

// Stops the training job run by `trial` (StopTrial): the job runner ends
// its container (SIGTERM, then SIGKILL after the grace), packs what it
// wrote to /opt/ml/model and ends the trial with its last measurement. The
// job is Stopping until then, Stopped after. Also reaches a job whose trial
// ended while its container runs; FailedPrecondition when nothing runs.
absl::Status StopJobTrial(Stub* stub, const HttpRequest& http,
                          const cairn::v1::Trial& trial);

// `trial` read again with its measurements (GetTrial), for the
// FinalMetricDataList of a job stopped before its last measurement became
// final.
absl::StatusOr<cairn::v1::Trial> WithMeasurements(
    Stub* stub, const HttpRequest& http, const cairn::v1::Trial& trial);

}  // namespace sagemaker_calls
}  // namespace cairn::http

#endif  // CAIRN_HTTP_SAGEMAKER_CALLS_H_
