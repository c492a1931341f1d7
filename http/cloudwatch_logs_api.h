// CloudWatchLogsApi: the read side of CloudWatch Logs for training jobs'
// logs (JSON 1.1: POST / with X-Amz-Target: Logs_20140328.<Operation>),
// so `aws logs tail /aws/sagemaker/TrainingJobs`, `aws logs
// get-log-events` and boto3's logs client read a job's log from cairnd
// (sagemaker/cloudwatch_logs.h). Requests are signed with the same AWS keys
// as SageMaker's API, with the SigV4 service `logs`; the caller's token
// finds the jobs through cairnd's own StudyService (ListStudies,
// ListTrials, LookupStudy: a viewer's role, as for ReadTrialLogs), and the
// logs are then read from the job dirs.
//
// Operations: DescribeLogGroups, DescribeLogStreams, GetLogEvents,
// FilterLogEvents. Nothing is written: CloudWatch Logs' other operations
// (PutLogEvents, CreateLogStream, DeleteLogGroup, ...) get
// AccessDeniedException, targets of other services
// UnknownOperationException.
#ifndef CAIRN_HTTP_CLOUDWATCH_LOGS_API_H_
#define CAIRN_HTTP_CLOUDWATCH_LOGS_API_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "http/http_server.h"
#include "http/sagemaker_api.h"
#include "sagemaker/cloudwatch_logs.h"

namespace cairn::http {

// Thread-safe.
class CloudWatchLogsApi {
 public:
  // `authenticate` checks SigV4 with the service `logs`; `audit` may be
  // empty (no audit log).
  CloudWatchLogsApi(
      std::unique_ptr<cairn::v1::StudyService::StubInterface> stub,
      SageMakerAuthenticator authenticate, SageMakerAuditor audit = {})
      : stub_(std::move(stub)),
        authenticate_(std::move(authenticate)),
        audit_(std::move(audit)) {}

  // Whether `request` is a CloudWatch Logs call: POST / whose
  // X-Amz-Target starts with "Logs_20140328.".
  static bool Matches(const HttpRequest& request);

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  absl::StatusOr<nlohmann::json> Serve(const HttpRequest& http,
                                       const std::string& operation) const;
  // The streams of the jobs the caller may read that `selection` can
  // match.
  absl::StatusOr<std::vector<sagemaker::TrainingLogStream>> Streams(
      const HttpRequest& http,
      const sagemaker::StreamSelection& selection) const;

  const std::unique_ptr<cairn::v1::StudyService::StubInterface> stub_;
  const SageMakerAuthenticator authenticate_;
  const SageMakerAuditor audit_;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_CLOUDWATCH_LOGS_API_H_
