// AWS Signature Version 4, the server side: parses the Authorization header
// botocore sends, rebuilds the canonical request and checks the signature,
// the credential scope and the clock skew. Only what the JSON 1.1 protocol
// needs: a POST with an empty or plain query and the body hashed by the
// server (no X-Amz-Content-SHA256, no presigned URLs, no chunked upload).
//
// Refusals are Unauthenticated statuses carrying the AWS error code
// (aws_error.h): IncompleteSignature for a malformed header,
// InvalidSignatureException for a signature or scope that does not match
// or a request outside the clock-skew window.
#ifndef CAIRN_SAGEMAKER_SIGV4_H_
#define CAIRN_SAGEMAKER_SIGV4_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace cairn::sagemaker {

// A request as received: header names in any case, in arrival order; a
// repeated header appears once per occurrence.
struct SignedRequest {
  std::string method;  // "POST"
  std::string path;    // "/", not URL-decoded
  std::string query;   // raw, without '?'
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// The parts of "AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/SERVICE/
// aws4_request, SignedHeaders=a;b, Signature=HEX".
struct SigV4Authorization {
  std::string access_key_id;
  std::string date;                         // yyyymmdd
  std::string region;                       // e.g. us-east-1
  std::string service;                      // e.g. sagemaker
  std::vector<std::string> signed_headers;  // lower-case, as listed
  std::string signature;                    // 64 lower-case hex digits
};

// Parses an Authorization header. Unauthenticated (IncompleteSignature)
// naming the part at fault; the header is quoted at most 100 characters.
absl::StatusOr<SigV4Authorization> ParseSigV4Authorization(
    absl::string_view header);

// The value of header `name` (lower-case) in `request`: repeated headers
// joined by ','; "" if absent.
std::string HeaderValue(const SignedRequest& request, absl::string_view name);

// The hex signature of `request` under `secret` with the scope and signed
// headers of `auth` (its signature field is ignored). `amz_date` is the
// X-Amz-Date value.
std::string ComputeSigV4Signature(const SignedRequest& request,
                                  const SigV4Authorization& auth,
                                  absl::string_view amz_date,
                                  absl::string_view secret);

struct SigV4Policy {
  std::string service = "sagemaker";  // the scope's service must be this
  absl::Duration max_skew = absl::Minutes(15);
};

// Checks `request` (whose Authorization header parsed into `auth`) against
// `secret` at time `now`: X-Amz-Date present, within max_skew of `now` and
// on the scope's date; the scope's service; host and x-amz-date among the
// signed headers; the signature (compared in constant time).
// Unauthenticated (InvalidSignatureException) naming what failed.
absl::Status VerifySigV4(const SignedRequest& request,
                         const SigV4Authorization& auth,
                         absl::string_view secret, absl::Time now,
                         const SigV4Policy& policy = {});

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_SIGV4_H_
