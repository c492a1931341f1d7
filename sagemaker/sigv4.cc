// See sigv4.h. The recipe is AWS's "Create a signed AWS API request",
// checked against requests signed by Debian's botocore 1.29.
#include "sagemaker/sigv4.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "sagemaker/aws_error.h"
#include "util/crypto/hmac.h"

namespace cairn::sagemaker {
namespace {

constexpr absl::string_view kAlgorithm = "AWS4-HMAC-SHA256";

absl::Status Incomplete(absl::string_view what, absl::string_view header) {
  return AwsStatus(absl::StatusCode::kUnauthenticated, "IncompleteSignature",
                   absl::StrCat("Authorization header: ", what, " (header '",
                                absl::CHexEscape(header.substr(0, 100)),
                                header.size() > 100 ? "...'" : "'", ")"));
}

absl::Status Invalid(absl::string_view message) {
  return AwsStatus(absl::StatusCode::kUnauthenticated,
                   "InvalidSignatureException", message);
}

bool IsLowerHex(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
  });
}

bool IsDigits(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

// Trims and collapses inner runs of spaces, as canonical headers want.
std::string CanonicalValue(absl::string_view value) {
  return absl::StrJoin(
      absl::StrSplit(value, absl::ByAnyChar(" \t"), absl::SkipEmpty()), " ");
}

// "Credential=AKID/DATE/REGION/SERVICE/aws4_request" into `out`.
bool ParseCredential(absl::string_view value, SigV4Authorization* out) {
  std::vector<std::string> parts = absl::StrSplit(value, '/');
  if (parts.size() != 5 || parts[4] != "aws4_request") return false;
  out->access_key_id = parts[0];
  out->date = parts[1];
  out->region = parts[2];
  out->service = parts[3];
  return !out->access_key_id.empty() && out->date.size() == 8 &&
         IsDigits(out->date) && !out->region.empty() && !out->service.empty();
}

bool ParseSignedHeaders(absl::string_view value, SigV4Authorization* out) {
  out->signed_headers = absl::StrSplit(value, ';');
  for (const std::string& name : out->signed_headers) {
    if (name.empty() || name != absl::AsciiStrToLower(name)) return false;
  }
  return true;
}

absl::StatusOr<absl::Time> ParseAmzDate(absl::string_view value) {
  // yyyymmddThhmmssZ; absl::ParseTime's %Y would swallow every digit.
  int f[6] = {};
  const int widths[6] = {4, 2, 2, 2, 2, 2};
  const size_t starts[6] = {0, 4, 6, 9, 11, 13};
  bool ok = value.size() == 16 && value[8] == 'T' && value[15] == 'Z';
  for (int i = 0; ok && i < 6; ++i) {
    absl::string_view part = value.substr(starts[i], widths[i]);
    ok = IsDigits(part) && absl::SimpleAtoi(part, &f[i]);
  }
  const absl::CivilSecond civil(f[0], f[1], f[2], f[3], f[4], f[5]);
  if (!ok || civil.month() != f[1] || civil.day() != f[2] ||
      civil.hour() != f[3] || civil.minute() != f[4] ||
      civil.second() != f[5]) {
    return Invalid(absl::StrCat("X-Amz-Date '",
                                absl::CHexEscape(value.substr(0, 40)),
                                "' is not yyyymmddThhmmssZ"));
  }
  return absl::FromCivil(civil, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<SigV4Authorization> ParseSigV4Authorization(
    absl::string_view header) {
  absl::string_view rest = header;
  if (!absl::ConsumePrefix(&rest, kAlgorithm) ||
      !absl::ConsumePrefix(&rest, " ")) {
    return Incomplete("not AWS4-HMAC-SHA256", header);
  }
  SigV4Authorization out;
  bool credential = false, signed_headers = false, signature = false;
  for (absl::string_view part : absl::StrSplit(rest, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, "Credential=")) {
      credential = ParseCredential(part, &out);
      if (!credential) return Incomplete("malformed Credential", header);
    } else if (absl::ConsumePrefix(&part, "SignedHeaders=")) {
      signed_headers = ParseSignedHeaders(part, &out);
      if (!signed_headers) return Incomplete("malformed SignedHeaders", header);
    } else if (absl::ConsumePrefix(&part, "Signature=")) {
      out.signature = std::string(part);
      signature = out.signature.size() == 64 && IsLowerHex(out.signature);
      if (!signature) return Incomplete("malformed Signature", header);
    } else {
      return Incomplete("unknown part", header);
    }
  }
  if (!credential || !signed_headers || !signature) {
    return Incomplete("needs Credential, SignedHeaders and Signature", header);
  }
  return out;
}

std::string HeaderValue(const SignedRequest& request, absl::string_view name) {
  std::vector<absl::string_view> values;
  for (const auto& [key, value] : request.headers) {
    if (absl::EqualsIgnoreCase(key, name)) values.push_back(value);
  }
  return absl::StrJoin(values, ",");
}

std::string ComputeSigV4Signature(const SignedRequest& request,
                                  const SigV4Authorization& auth,
                                  absl::string_view amz_date,
                                  absl::string_view secret) {
  std::string canonical_headers;
  for (const std::string& name : auth.signed_headers) {
    absl::StrAppend(&canonical_headers, name, ":",
                    CanonicalValue(HeaderValue(request, name)), "\n");
  }
  const std::string canonical = absl::StrJoin(
      {absl::string_view(request.method),
       absl::string_view(request.path.empty() ? "/" : request.path),
       absl::string_view(request.query), absl::string_view(canonical_headers),
       absl::string_view(absl::StrJoin(auth.signed_headers, ";")),
       absl::string_view(util::Sha256Hex(request.body))},
      "\n");
  const std::string scope = absl::StrCat(auth.date, "/", auth.region, "/",
                                         auth.service, "/aws4_request");
  const std::string to_sign =
      absl::StrCat(kAlgorithm, "\n", amz_date, "\n", scope, "\n",
                   util::Sha256Hex(canonical));
  std::string key = util::HmacSha256(absl::StrCat("AWS4", secret), auth.date);
  key = util::HmacSha256(key, auth.region);
  key = util::HmacSha256(key, auth.service);
  key = util::HmacSha256(key, "aws4_request");
  return util::HmacSha256Hex(key, to_sign);
}

absl::Status VerifySigV4(const SignedRequest& request,
                         const SigV4Authorization& auth,
                         absl::string_view secret, absl::Time now,
                         const SigV4Policy& policy) {
  if (auth.service != policy.service) {
    return Invalid(absl::StrCat("credential scope service '",
                                absl::CHexEscape(auth.service.substr(0, 40)),
                                "' is not '", policy.service, "'"));
  }
  for (absl::string_view needed : {"host", "x-amz-date"}) {
    if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(),
                  needed) == auth.signed_headers.end()) {
      return Invalid(absl::StrCat("SignedHeaders must include ", needed));
    }
  }
  const std::string amz_date = HeaderValue(request, "x-amz-date");
  absl::StatusOr<absl::Time> signed_at = ParseAmzDate(amz_date);
  if (!signed_at.ok()) return signed_at.status();
  if (!absl::StartsWith(amz_date, auth.date)) {
    return Invalid(absl::StrCat("credential scope date ", auth.date,
                                " is not the date of X-Amz-Date ", amz_date));
  }
  if (absl::AbsDuration(now - *signed_at) > policy.max_skew) {
    return Invalid(absl::StrCat(
        "Signature expired: X-Amz-Date ", amz_date, " is more than ",
        absl::FormatDuration(policy.max_skew), " from the server's time ",
        absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone())));
  }
  const std::string expected =
      ComputeSigV4Signature(request, auth, amz_date, secret);
  if (CRYPTO_memcmp(expected.data(), auth.signature.data(), 64) != 0) {
    return Invalid(
        "The request signature we calculated does not match the signature "
        "you provided. Check your AWS Secret Access Key and signing method.");
  }
  return absl::OkStatus();
}

}  // namespace cairn::sagemaker
