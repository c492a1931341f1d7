// Errors in the shape botocore parses for JSON 1.1 services:
// {"__type": CODE, "message": TEXT} with an HTTP status. Components return
// absl::Status; AwsErrorOf picks SageMaker's code from the status code, or
// from a payload that names it (AwsStatus) where one absl code covers
// several AWS codes (the signature refusals).
#ifndef CAIRN_SAGEMAKER_AWS_ERROR_H_
#define CAIRN_SAGEMAKER_AWS_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cairn::sagemaker {

// A status of `code` whose AWS error code is `aws_code`.
absl::Status AwsStatus(absl::StatusCode code, absl::string_view aws_code,
                       absl::string_view message);

struct AwsError {
  int http_status = 400;
  std::string code;     // "ValidationException", "ResourceNotFound", ...
  std::string message;  // at most kMaxAwsMessageBytes
};

inline constexpr size_t kMaxAwsMessageBytes = 900;

// The AWS error of a non-OK status: InvalidArgument ValidationException,
// NotFound ResourceNotFound, AlreadyExists ResourceInUse, ResourceExhausted
// ResourceLimitExceeded, FailedPrecondition ValidationException,
// PermissionDenied AccessDeniedException, Unauthenticated
// InvalidSignatureException (403), Unimplemented UnknownOperationException,
// Unavailable ServiceUnavailable (503), others InternalFailure (500); an
// AwsStatus payload overrides the code. The message is cut to
// kMaxAwsMessageBytes.
AwsError AwsErrorOf(const absl::Status& status);

// The JSON body of `error`.
std::string AwsErrorBody(const AwsError& error);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_AWS_ERROR_H_
