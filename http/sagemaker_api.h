// SageMakerApi: SageMaker's training-job API (JSON 1.1: POST / with
// X-Amz-Target: SageMaker.<Operation>), so boto3's sagemaker client works
// against cairnd. Every request is authenticated by `authenticate` (SigV4,
// server/cairnd_sagemaker.cc), which yields the bearer credential of the
// token whose AWS key signed it; each operation then calls cairnd's own
// StudyService in-process as that token, so roles, input limits, audit and
// metrics are gRPC's. The conversions live in sagemaker/.
//
// Operations: CreateTrainingJob, DescribeTrainingJob, ListTrainingJobs,
// StopTrainingJob, CreateHyperParameterTuningJob,
// DescribeHyperParameterTuningJob,
// ListTrainingJobsForHyperParameterTuningJob, StopHyperParameterTuningJob,
// ListHyperParameterTuningJobs, AddTags, ListTags, DeleteTags.
// Others:
// UnknownOperationException. Errors: the JSON shape botocore parses
// (sagemaker/aws_error.h).
#ifndef CAIRN_HTTP_SAGEMAKER_API_H_
#define CAIRN_HTTP_SAGEMAKER_API_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "http/http_server.h"
#include "sagemaker/object_root.h"
#include "sagemaker/sigv4.h"

namespace cairn::http {

// Checks a request's signature; returns the Authorization value for the
// gRPC call ("Bearer ..."; "" when cairnd runs without tokens) or the
// refusal (sagemaker/aws_error.h codes). `operation` names the call for the
// audit log.
using SageMakerAuthenticator = std::function<absl::StatusOr<std::string>(
    const sagemaker::SignedRequest& request, const HttpRequest& http,
    const std::string& operation)>;

// Records a served operation in the audit log: `http` carries the caller's
// bearer credential, `operation` is SageMaker's name for it. Refused
// signatures are recorded by the authenticator instead.
using SageMakerAuditor =
    std::function<void(const HttpRequest& http, const std::string& operation,
                       bool changes_state, const absl::Status& result)>;

// Thread-safe.
class SageMakerApi {
 public:
  // `audit` may be empty (no audit log).
  SageMakerApi(std::unique_ptr<cairn::v1::StudyService::StubInterface> stub,
               SageMakerAuthenticator authenticate,
               sagemaker::ObjectRoot objects, SageMakerAuditor audit = {})
      : stub_(std::move(stub)),
        authenticate_(std::move(authenticate)),
        objects_(std::move(objects)),
        audit_(std::move(audit)) {}

  // Whether `request` is a SageMaker call: POST / with an X-Amz-Target
  // header.
  static bool Matches(const HttpRequest& request);

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  struct Call;  // One request being served (sagemaker_api.cc).
  // The operation `call` names (X-Amz-Target `target`), served.
  absl::StatusOr<std::string> Serve(const Call& call,
                                    absl::string_view target) const;
  absl::StatusOr<std::string> Create(const Call& call) const;
  absl::StatusOr<std::string> Describe(const Call& call) const;
  absl::StatusOr<std::string> List(const Call& call) const;
  absl::StatusOr<std::string> Stop(const Call& call) const;
  absl::StatusOr<std::string> CreateTuning(const Call& call) const;
  absl::StatusOr<std::string> DescribeTuning(const Call& call) const;
  absl::StatusOr<std::string> ListTuningJobs(const Call& call) const;
  absl::StatusOr<std::string> StopTuning(const Call& call) const;
  absl::StatusOr<std::string> ListTuning(const Call& call) const;
  // sagemaker_tags_api.cc
  absl::StatusOr<std::string> AddTags(const Call& call) const;
  absl::StatusOr<std::string> ListTags(const Call& call) const;
  absl::StatusOr<std::string> DeleteTags(const Call& call) const;

  const std::unique_ptr<cairn::v1::StudyService::StubInterface> stub_;
  const SageMakerAuthenticator authenticate_;
  const sagemaker::ObjectRoot objects_;
  const SageMakerAuditor audit_;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_SAGEMAKER_API_H_
