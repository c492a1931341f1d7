// Cairnd::MakeSageMakerApi and MakeCloudWatchLogsApi: SageMaker's API and
// CloudWatch Logs' read API on the HTTP port. A request is authenticated by
// its SigV4 signature under the AWS key of a token (auth/aws_keys.h), with
// the scope's service `sagemaker` or `logs`; the API then calls this
// cairnd's StudyService through an in-process channel with the token's
// session secret, so roles, audit and limits are those of gRPC. Each
// operation is also audited here as /SageMaker/<operation> or
// /Logs/<operation> (reads only with --audit-reads, like gRPC's), and so
// are refused signatures, since no gRPC call follows them.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "audit/call_peer.h"
#include "grpcpp/support/channel_arguments.h"
#include "sagemaker/aws_error.h"
#include "server/cairnd.h"
#include "spdlog/spdlog.h"

namespace cairn {
namespace {

absl::Status Unrecognized(absl::string_view why) {
  return sagemaker::AwsStatus(absl::StatusCode::kUnauthenticated,
                              "UnrecognizedClientException", why);
}

// The bearer credential for the token whose AWS key signed `r`.
absl::StatusOr<std::string> BearerOf(auth::TokenRegistry& tokens,
                                     const auth::AwsKeys& keys,
                                     const sagemaker::SignedRequest& r,
                                     const sagemaker::SigV4Policy& policy,
                                     std::string* key_id) {
  absl::StatusOr<sagemaker::SigV4Authorization> sig =
      sagemaker::ParseSigV4Authorization(
          sagemaker::HeaderValue(r, "authorization"));
  if (!sig.ok()) return sig.status();
  *key_id = sig->access_key_id.substr(0, 40);
  const absl::Time now = absl::Now();
  std::optional<cairn::v1::Token> token =
      keys.Find(sig->access_key_id, tokens.List());
  if (!token.has_value()) {
    return Unrecognized(
        "The security token included in the request is "
        "invalid: unknown access key id");
  }
  if (token->revoked() ||
      (token->has_expire_time() &&
       absl::FromUnixSeconds(token->expire_time().seconds()) <= now)) {
    return Unrecognized(absl::StrCat("the token '", token->name(),
                                     "' of this access key was revoked or "
                                     "has expired"));
  }
  if (absl::Status s = sagemaker::VerifySigV4(
          r, *sig, keys.For(*token).secret_access_key, now, policy);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> session = tokens.SessionSecret(token->name());
  if (!session.ok()) return session.status();
  return absl::StrCat("Bearer ", *session);
}

void RecordRefusal(audit::AuditLog* log, const std::string& method,
                   const std::string& key_id, const std::string& peer,
                   const absl::Status& status) {
  cairn::v1::AuditEvent event;
  event.set_principal(key_id.empty() ? "" : absl::StrCat("aws:", key_id));
  event.set_method(method);
  event.set_code(static_cast<int>(status.code()));
  event.set_message(std::string(status.message()));
  event.set_peer(audit::CallPeer("", peer));
  if (absl::Status s = log->Record(std::move(event)); !s.ok()) {
    spdlog::error("audit log: cannot record a SageMaker refusal: {}",
                  std::string(s.message()));
  }
}

// Records a served operation as <prefix><operation> (prefix "/SageMaker/"
// or "/Logs/") under the identity of the token whose key signed it.
http::SageMakerAuditor MakeAuditor(const auth::Authorizer* authorizer,
                                   audit::AuditLog* log, std::string prefix) {
  return [authorizer, log, prefix](
             const http::HttpRequest& http, const std::string& operation,
             bool changes_state, const absl::Status& result) {
    const int code = static_cast<int>(result.code());
    if (log == nullptr || !log->ShouldRecordOperation(changes_state, code))
      return;
    cairn::v1::AuditEvent event;
    if (authorizer != nullptr) {
      if (auto who = authorizer->Identify(http.authorization)) {
        event.set_principal(std::move(who->name));
        event.set_role(who->role);
      }
    }
    event.set_method(absl::StrCat(prefix, operation));
    event.set_code(code);
    event.set_message(std::string(result.message().substr(0, 256)));
    event.set_peer(audit::CallPeer("", http.peer));
    if (absl::Status s = log->Record(std::move(event)); !s.ok()) {
      spdlog::error("audit log: cannot record a SageMaker call: {}",
                    std::string(s.message()));
    }
  };
}

// Checks SigV4 with the scope's service `service`; refusals are audited as
// <prefix><operation>.
http::SageMakerAuthenticator MakeAuthenticator(auth::TokenRegistry* tokens,
                                               const auth::AwsKeys* keys,
                                               audit::AuditLog* log,
                                               std::string service,
                                               std::string prefix) {
  return [tokens, keys, log, service, prefix](
             const sagemaker::SignedRequest& r, const http::HttpRequest& http,
             const std::string& operation) -> absl::StatusOr<std::string> {
    if (tokens == nullptr || keys == nullptr) return std::string();
    std::string key_id;
    sagemaker::SigV4Policy policy;
    policy.service = service;
    absl::StatusOr<std::string> bearer =
        BearerOf(*tokens, *keys, r, policy, &key_id);
    if (!bearer.ok() && log != nullptr) {
      RecordRefusal(log, absl::StrCat(prefix, operation), key_id, http.peer,
                    bearer.status());
    }
    return bearer;
  };
}

}  // namespace

std::unique_ptr<http::SageMakerApi> Cairnd::MakeSageMakerApi(
    const CairndOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  return std::make_unique<http::SageMakerApi>(
      cairn::v1::StudyService::NewStub(server_->InProcessChannel(args)),
      MakeAuthenticator(tokens_.get(), aws_keys_.get(), audit_log_.get(),
                        "sagemaker", "/SageMaker/"),
      sagemaker::ObjectRoot(options.object_root),
      MakeAuditor(authorizer_.get(), audit_log_.get(), "/SageMaker/"));
}

std::unique_ptr<http::CloudWatchLogsApi> Cairnd::MakeCloudWatchLogsApi() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  return std::make_unique<http::CloudWatchLogsApi>(
      cairn::v1::StudyService::NewStub(server_->InProcessChannel(args)),
      MakeAuthenticator(tokens_.get(), aws_keys_.get(), audit_log_.get(),
                        "logs", "/Logs/"),
      MakeAuditor(authorizer_.get(), audit_log_.get(), "/Logs/"));
}

}  // namespace cairn
