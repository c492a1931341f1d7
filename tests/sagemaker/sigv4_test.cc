// SigV4 verification against AWS's test-suite vector and a request signed
// by Debian's botocore 1.29 (FACTS.md section 2), and each refusal.
#include "sagemaker/sigv4.h"

#include "gtest/gtest.h"
#include "sagemaker/aws_error.h"

namespace cairn::sagemaker {
namespace {

// botocore: SigV4Auth(Credentials("AKIDCAIRNEXAMPLE",
// "cairnSecretExample/Key+123"), "sagemaker", "eu-west-1") on a
// DescribeTrainingJob POST to http://127.0.0.1:8080/ at 20261126T220141Z.
constexpr char kSecret[] = "cairnSecretExample/Key+123";
constexpr char kBotocoreAuth[] =
    "AWS4-HMAC-SHA256 Credential=AKIDCAIRNEXAMPLE/20261126/eu-west-1/"
    "sagemaker/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
    "Signature="
    "76f71378ceddd2469ade4e0d621d5e9b2ca7963df55a639344b774a4afeb5827";

SignedRequest BotocoreRequest() {
  SignedRequest r;
  r.method = "POST";
  r.path = "/";
  r.headers = {{"Host", "127.0.0.1:8080"},
               {"X-Amz-Target", "SageMaker.DescribeTrainingJob"},
               {"Content-Type", "application/x-amz-json-1.1"},
               {"X-Amz-Date", "20261126T220141Z"},
               {"Authorization", kBotocoreAuth},
               {"User-Agent", "Boto3/1.26.27"}};
  r.body = R"({"TrainingJobName": "xgb-1"})";
  return r;
}

const absl::Time kSignedAt = absl::FromCivil(
    absl::CivilSecond(2026, 11, 26, 22, 1, 41), absl::UTCTimeZone());

absl::Status Verify(const SignedRequest& r, absl::string_view secret,
                    absl::Time now) {
  absl::StatusOr<SigV4Authorization> auth =
      ParseSigV4Authorization(HeaderValue(r, "authorization"));
  if (!auth.ok()) return auth.status();
  return VerifySigV4(r, *auth, secret, now);
}

std::string AwsCode(const absl::Status& s) { return AwsErrorOf(s).code; }

TEST(SigV4Test, AwsTestSuiteGetVanilla) {
  SignedRequest r;
  r.method = "GET";
  r.path = "/";
  r.headers = {{"Host", "example.amazonaws.com"},
               {"X-Amz-Date", "20150830T123600Z"}};
  absl::StatusOr<SigV4Authorization> auth = ParseSigV4Authorization(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
      "aws4_request, SignedHeaders=host;x-amz-date, "
      "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fb"
      "f31");
  ASSERT_TRUE(auth.ok()) << auth.status();
  SigV4Policy policy;
  policy.service = "service";
  const absl::Time now = absl::FromCivil(
      absl::CivilSecond(2015, 8, 30, 12, 36, 0), absl::UTCTimeZone());
  EXPECT_TRUE(VerifySigV4(r, *auth, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                          now, policy)
                  .ok());
}

TEST(SigV4Test, BotocoreRequestVerifies) {
  absl::StatusOr<SigV4Authorization> auth =
      ParseSigV4Authorization(kBotocoreAuth);
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(auth->access_key_id, "AKIDCAIRNEXAMPLE");
  EXPECT_EQ(auth->region, "eu-west-1");
  EXPECT_TRUE(Verify(BotocoreRequest(), kSecret, kSignedAt).ok());
  // Within the 15-minute window either way.
  EXPECT_TRUE(
      Verify(BotocoreRequest(), kSecret, kSignedAt + absl::Minutes(14)).ok());
  EXPECT_TRUE(
      Verify(BotocoreRequest(), kSecret, kSignedAt - absl::Minutes(14)).ok());
}

TEST(SigV4Test, AnyChangeIsRefused) {
  SignedRequest body = BotocoreRequest();
  body.body[5] = 'X';
  SignedRequest target = BotocoreRequest();
  target.headers[1].second = "SageMaker.StopTrainingJob";
  SignedRequest host = BotocoreRequest();
  host.headers[0].second = "127.0.0.1:8081";
  for (const SignedRequest& r : {body, target, host}) {
    absl::Status s = Verify(r, kSecret, kSignedAt);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(AwsCode(s), "InvalidSignatureException");
    EXPECT_EQ(AwsErrorOf(s).http_status, 403);
  }
  EXPECT_EQ(AwsCode(Verify(BotocoreRequest(), "wrong", kSignedAt)),
            "InvalidSignatureException");
}

TEST(SigV4Test, SkewedClockIsRefused) {
  absl::Status s =
      Verify(BotocoreRequest(), kSecret, kSignedAt + absl::Minutes(16));
  EXPECT_EQ(AwsCode(s), "InvalidSignatureException");
  EXPECT_NE(s.message().find("Signature expired"), std::string::npos) << s;
  s = Verify(BotocoreRequest(), kSecret, kSignedAt - absl::Minutes(16));
  EXPECT_NE(s.message().find("Signature expired"), std::string::npos) << s;
}

TEST(SigV4Test, ScopeMustMatch) {
  SignedRequest r = BotocoreRequest();
  r.headers[3].second = "20261127T000000Z";  // another day than the scope
  EXPECT_NE(Verify(r, kSecret, kSignedAt).message().find("scope date"),
            std::string::npos);
  absl::StatusOr<SigV4Authorization> auth =
      ParseSigV4Authorization(kBotocoreAuth);
  ASSERT_TRUE(auth.ok());
  auth->service = "s3";
  EXPECT_NE(VerifySigV4(BotocoreRequest(), *auth, kSecret, kSignedAt)
                .message()
                .find("service"),
            std::string::npos);
  auth->service = "sagemaker";
  auth->signed_headers = {"content-type", "x-amz-date", "x-amz-target"};
  EXPECT_NE(VerifySigV4(BotocoreRequest(), *auth, kSecret, kSignedAt)
                .message()
                .find("host"),
            std::string::npos);
}

TEST(SigV4Test, MalformedHeadersAreIncomplete) {
  for (const char* header :
       {"", "Bearer cairn_x", "AWS4-HMAC-SHA256 Credential=A/B",
        "AWS4-HMAC-SHA256 Credential=AK/20261126/r/s/aws4_request, "
        "SignedHeaders=host, Signature=zz",
        "AWS4-HMAC-SHA256 Credential=AK/2026112/r/s/aws4_request, "
        "SignedHeaders=host, Signature="
        "76f71378ceddd2469ade4e0d621d5e9b2ca7963df55a639344b774a4afeb5827"}) {
    absl::StatusOr<SigV4Authorization> auth = ParseSigV4Authorization(header);
    ASSERT_FALSE(auth.ok()) << header;
    EXPECT_EQ(AwsCode(auth.status()), "IncompleteSignature");
    EXPECT_LT(auth.status().message().size(), 300u);
  }
}

TEST(AwsErrorTest, CodesStatusesAndSize) {
  AwsError e = AwsErrorOf(absl::NotFoundError("no job x"));
  EXPECT_EQ(e.code, "ResourceNotFound");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(AwsErrorOf(absl::AlreadyExistsError("dup")).code, "ResourceInUse");
  EXPECT_EQ(AwsErrorOf(absl::UnimplementedError("op")).code,
            "UnknownOperationException");
  EXPECT_EQ(AwsErrorOf(absl::InternalError("x")).http_status, 500);
  e = AwsErrorOf(absl::InvalidArgumentError(std::string(5000, 'v')));
  EXPECT_EQ(e.code, "ValidationException");
  EXPECT_LT(AwsErrorBody(e).size(), 1024u);
  EXPECT_EQ(AwsErrorBody(AwsErrorOf(absl::NotFoundError("gone"))),
            R"({"__type":"ResourceNotFound","message":"gone"})");
}

}  // namespace
}  // namespace cairn::sagemaker
