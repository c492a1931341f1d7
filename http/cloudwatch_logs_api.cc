// See cloudwatch_logs_api.h.
#include "http/cloudwatch_logs_api.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "http/sagemaker_calls.h"
#include "sagemaker/aws_error.h"
#include "sagemaker/cloudwatch_logs_request.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::http {

using nlohmann::json;
using sagemaker_calls::Rpc;
using sagemaker_calls::Stub;

namespace {

constexpr char kTargetPrefix[] = "Logs_20140328.";

std::string TargetOf(const HttpRequest& r) {
  for (const auto& [k, v] : r.headers) {
    if (absl::EqualsIgnoreCase(k, "X-Amz-Target")) return v;
  }
  return "";
}

// The operation named by a target, cut to 64 letters and digits.
std::string OperationOf(absl::string_view target) {
  absl::ConsumePrefix(&target, kTargetPrefix);
  std::string op;
  for (char c : target.substr(0, 64)) {
    op.push_back(absl::ascii_isalnum(static_cast<unsigned char>(c)) ? c : '_');
  }
  return op;
}

// Whether CloudWatch Logs' operation `op` only reads.
bool IsReadOperation(absl::string_view op) {
  for (const char* p : {"Describe", "Get", "List", "Filter", "Test",
                        "StartQuery", "StopQuery", "StartLiveTail"}) {
    if (absl::StartsWith(op, p)) return true;
  }
  return false;
}

HttpResponse Respond(const absl::StatusOr<json>& result) {
  HttpResponse out;
  out.content_type = "application/x-amz-json-1.1";
  if (result.ok()) {
    out.body = sagemaker::LogsResponseBody(*result);
    return out;
  }
  const sagemaker::AwsError error = sagemaker::AwsErrorOf(result.status());
  out.status = error.http_status;
  out.body = sagemaker::AwsErrorBody(error);
  return out;
}

// The streams of every job of `study` (a training or a tuning job's) that
// `selection` can match.
absl::Status AddStudyStreams(Stub* stub, const HttpRequest& http,
                             const cairn::v1::Study& study,
                             const sagemaker::StreamSelection& selection,
                             std::vector<sagemaker::TrainingLogStream>& out) {
  cairn::v1::ListTrialsRequest list;
  list.set_parent(study.name());
  auto trials = Rpc(stub, http, &Stub::ListTrials, list);
  if (!trials.ok()) return trials.status();
  for (const cairn::v1::Trial& trial : trials->trials()) {
    auto streams = sagemaker::TrainingJobStreams(study, trial);
    if (!streams.ok()) return streams.status();
    for (sagemaker::TrainingLogStream& s : *streams) {
      if (selection.Matches(s.name)) out.push_back(std::move(s));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool CloudWatchLogsApi::Matches(const HttpRequest& request) {
  return request.method == "POST" && request.path == "/" &&
         absl::StartsWith(TargetOf(request), kTargetPrefix);
}

HttpResponse CloudWatchLogsApi::Handle(const HttpRequest& request) const {
  const std::string operation = OperationOf(TargetOf(request));
  sagemaker::SignedRequest signed_request{request.method, "/", request.query,
                                          request.headers, request.body};
  absl::StatusOr<std::string> bearer =
      authenticate_(signed_request, request, operation);
  if (!bearer.ok()) return Respond(bearer.status());
  HttpRequest http = request;
  http.authorization = *bearer;
  absl::StatusOr<json> result = Serve(http, operation);
  if (audit_) {
    audit_(http, operation, !IsReadOperation(operation), result.status());
  }
  return Respond(result);
}

absl::StatusOr<json> CloudWatchLogsApi::Serve(
    const HttpRequest& http, const std::string& operation) const {
  const std::string& body = http.body;
  if (operation == "DescribeLogGroups") {
    auto request = sagemaker::ParseDescribeLogGroups(body);
    if (!request.ok()) return request.status();
    return sagemaker::DescribeLogGroups(*request);
  }
  if (operation == "DescribeLogStreams") {
    auto request = sagemaker::ParseDescribeLogStreams(body);
    if (!request.ok()) return request.status();
    auto streams = Streams(http, request->selection);
    if (!streams.ok()) return streams.status();
    return sagemaker::DescribeLogStreams(*request, *streams);
  }
  if (operation == "GetLogEvents") {
    auto request = sagemaker::ParseGetLogEvents(body);
    if (!request.ok()) return request.status();
    auto streams = Streams(http, {{request->stream}, ""});
    if (!streams.ok()) return streams.status();
    return sagemaker::GetLogEvents(*request, *streams);
  }
  if (operation == "FilterLogEvents") {
    auto request = sagemaker::ParseFilterLogEvents(body);
    if (!request.ok()) return request.status();
    auto streams = Streams(http, request->selection);
    if (!streams.ok()) return streams.status();
    return sagemaker::FilterLogEvents(*request, *streams);
  }
  if (!IsReadOperation(operation)) {
    return sagemaker::AwsStatus(
        absl::StatusCode::kPermissionDenied, "AccessDeniedException",
        absl::StrCat("operation '", operation,
                     "' writes: cairnd's CloudWatch Logs are read-only (the "
                     "training jobs' logs of ",
                     sagemaker::kTrainingJobsLogGroup, ")"));
  }
  return absl::UnimplementedError(absl::StrCat(
      "operation '", operation,
      "' is not one Cairn serves (DescribeLogGroups, DescribeLogStreams, "
      "GetLogEvents, FilterLogEvents)"));
}

absl::StatusOr<std::vector<sagemaker::TrainingLogStream>>
CloudWatchLogsApi::Streams(const HttpRequest& http,
                           const sagemaker::StreamSelection& selection) const {
  std::vector<sagemaker::TrainingLogStream> out;
  const std::string job = selection.JobName();
  if (!job.empty()) {  // One job: look it up instead of listing all.
    auto record = sagemaker_calls::FindJob(stub_.get(), http, job);
    if (record.status().code() == absl::StatusCode::kNotFound) {
      record = sagemaker_calls::FindTuningTrainingJob(stub_.get(), http, job);
    }
    // A name no job can have names no stream either.
    if (absl::IsNotFound(record.status()) ||
        absl::IsInvalidArgument(record.status())) {
      return out;
    }
    if (!record.ok()) return record.status();
    if (!record->trial) return out;
    auto streams = sagemaker::TrainingJobStreams(record->study, *record->trial);
    if (!streams.ok()) return streams.status();
    for (sagemaker::TrainingLogStream& s : *streams) {
      if (selection.Matches(s.name)) out.push_back(std::move(s));
    }
    return out;
  }
  auto studies = sagemaker_calls::AllStudies(stub_.get(), http);
  if (!studies.ok()) return studies.status();
  for (const cairn::v1::Study& study : *studies) {
    if (!study.spec().has_sagemaker_training_job()) continue;
    absl::Status s = AddStudyStreams(stub_.get(), http, study, selection, out);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace cairn::http
