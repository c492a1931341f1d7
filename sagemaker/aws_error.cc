// See aws_error.h.
#include "sagemaker/aws_error.h"

#include "absl/strings/cord.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {
namespace {

constexpr absl::string_view kCodePayload = "type.cairn.dev/aws-error-code";

struct CodeAndStatus {
  const char* code;
  int http_status;
};

CodeAndStatus DefaultCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return {"ValidationException", 400};
    case absl::StatusCode::kNotFound:
      return {"ResourceNotFound", 400};
    case absl::StatusCode::kAlreadyExists:
      return {"ResourceInUse", 400};
    case absl::StatusCode::kResourceExhausted:
      return {"ResourceLimitExceeded", 400};
    case absl::StatusCode::kPermissionDenied:
      return {"AccessDeniedException", 400};
    case absl::StatusCode::kUnauthenticated:
      return {"InvalidSignatureException", 403};
    case absl::StatusCode::kUnimplemented:
      return {"UnknownOperationException", 400};
    case absl::StatusCode::kUnavailable:
      return {"ServiceUnavailable", 503};
    default:
      return {"InternalFailure", 500};
  }
}

// Cuts `text` to at most `max` bytes without splitting a UTF-8 sequence.
std::string Cut(absl::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return std::string(text.substr(0, end));
}

}  // namespace

absl::Status AwsStatus(absl::StatusCode code, absl::string_view aws_code,
                       absl::string_view message) {
  absl::Status status(code, message);
  status.SetPayload(kCodePayload, absl::Cord(aws_code));
  return status;
}

AwsError AwsErrorOf(const absl::Status& status) {
  const CodeAndStatus fallback = DefaultCode(status.code());
  AwsError error;
  error.http_status = fallback.http_status;
  const auto payload = status.GetPayload(kCodePayload);
  error.code = payload.has_value() ? std::string(*payload) : fallback.code;
  error.message = Cut(status.message(), kMaxAwsMessageBytes);
  return error;
}

std::string AwsErrorBody(const AwsError& error) {
  nlohmann::json body = {{"__type", error.code}, {"message", error.message}};
  // Invalid UTF-8 in a message (quoted from the request) is replaced, not
  // thrown on.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cairn::sagemaker
