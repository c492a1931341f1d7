// Cost of SigV4 verification per SageMaker request, beside the bearer
// token check every gRPC call pays (one SHA-256 of the secret), measured
// side by side in one run.
//
//   sigv4_bench [--requests=N]
//
// The request is the DescribeTrainingJob POST botocore 1.29 signs
// (tests/sagemaker/sigv4_test.cc); each round parses the Authorization
// header and verifies the signature (canonical request, 4 HMACs for the
// key, 1 for the signature, 2 SHA-256), then hashes a token secret.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "auth/token.h"
#include "sagemaker/sigv4.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::sagemaker::SignedRequest;

SignedRequest Request() {
  SignedRequest r;
  r.method = "POST";
  r.path = "/";
  r.headers = {
      {"Host", "127.0.0.1:8080"},
      {"X-Amz-Target", "SageMaker.DescribeTrainingJob"},
      {"Content-Type", "application/x-amz-json-1.1"},
      {"X-Amz-Date", "20261126T220141Z"},
      {"Authorization",
       "AWS4-HMAC-SHA256 Credential=AKIDCAIRNEXAMPLE/20261126/eu-west-1/"
       "sagemaker/aws4_request, "
       "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
       "Signature="
       "76f71378ceddd2469ade4e0d621d5e9b2ca7963df55a639344b774a4afeb5827"}};
  r.body = R"({"TrainingJobName": "xgb-1"})";
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 200000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--requests=", 11) == 0) {
      requests = std::max(1000, std::atoi(argv[i] + 11));
    }
  }
  const SignedRequest r = Request();
  const absl::Time now = absl::FromCivil(
      absl::CivilSecond(2026, 11, 26, 22, 1, 41), absl::UTCTimeZone());
  const std::string secret = "cairn_" + std::string(64, 'a');
  std::vector<double> sig_ns, token_ns;
  int ok = 0;
  const int slice = requests / 10;
  for (int round = 0; round < 10; ++round) {
    auto t0 = Clock::now();
    for (int i = 0; i < slice; ++i) {
      auto auth = cairn::sagemaker::ParseSigV4Authorization(
          cairn::sagemaker::HeaderValue(r, "authorization"));
      ok += auth.ok() && cairn::sagemaker::VerifySigV4(
                             r, *auth, "cairnSecretExample/Key+123", now)
                             .ok();
    }
    auto t1 = Clock::now();
    size_t sink = 0;
    for (int i = 0; i < slice; ++i) {
      sink += cairn::auth::TokenSha256(secret).size();
    }
    auto t2 = Clock::now();
    ok += sink == 0;
    sig_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                     slice);
    token_ns.push_back(
        std::chrono::duration<double, std::nano>(t2 - t1).count() / slice);
  }
  if (ok != slice * 10) {
    std::fprintf(stderr, "sigv4_bench: a verification failed\n");
    return 1;
  }
  const double sig = Median(sig_ns), token = Median(token_ns);
  std::printf("SigV4 verification: %.2f us/request\n", sig / 1000);
  std::printf("bearer token SHA-256: %.2f us/request\n", token / 1000);
  std::printf("ratio: %.1fx\n", sig / token);
  return 0;
}
