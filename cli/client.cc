// StudyClient: deadlines, status conversion and study resolution.
#include "cli/client.h"

#include <utility>

#include "absl/strings/match.h"
#include "auth/client_token.h"
#include "cli/args.h"

namespace cairn::cli {

absl::Status FromGrpcStatus(const grpc::Status& status,
                            const std::string& target) {
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  std::string message = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    message = absl::StrCat("cairnd at ", target, ": ", message);
  }
  // What a plaintext client sees from a TLS cairnd, and a client without
  // an accepted certificate from one that requires them.
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE &&
      absl::StrContains(message, "Socket closed")) {
    absl::StrAppend(&message,
                    " (if cairnd serves TLS, pass --tls-ca FILE; if it "
                    "requires client certificates, --tls-cert and --tls-key)");
  }
  return absl::Status(code, message);
}

StudyClient::StudyClient(std::string target, std::chrono::milliseconds timeout,
                         const std::string& token,
                         std::shared_ptr<grpc::ChannelCredentials> credentials)
    : target_(std::move(target)), timeout_(timeout) {
  // A connection of its own (not shared through gRPC's global subchannel
  // pool), so a client that replaces its StudyClient after cairnd went away
  // (study wait) connects afresh instead of inheriting the old connection's
  // reconnect backoff.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (credentials == nullptr) {
    credentials = grpc::InsecureChannelCredentials();
  }
  std::shared_ptr<grpc::Channel> channel =
      auth::NewAuthChannel(target_, token, std::move(credentials), args);
  stub_ = cairn::v1::StudyService::NewStub(channel);
  admin_stub_ = cairn::v1::AdminService::NewStub(channel);
  job_stub_ = cairn::v1::JobService::NewStub(channel);
  key_stub_ = cairn::v1::SageMakerKeyService::NewStub(channel);
}

absl::StatusOr<cairn::v1::Study> StudyClient::ResolveStudy(
    const std::string& arg) {
  auto ref = ParseStudyRef(arg);
  if (!ref.ok()) return ref.status();
  if (!ref->name.empty()) {
    cairn::v1::GetStudyRequest request;
    request.set_name(ref->name);
    return Call(&Stub::GetStudy, request);
  }
  cairn::v1::LookupStudyRequest request;
  request.set_display_name(ref->display_name);
  return Call(&Stub::LookupStudy, request);
}

absl::StatusOr<std::string> StudyClient::ResolveStudyName(
    const std::string& arg) {
  auto ref = ParseStudyRef(arg);
  if (!ref.ok()) return ref.status();
  if (!ref->name.empty()) return ref->name;
  auto study = ResolveStudy(arg);
  if (!study.ok()) return study.status();
  return study->name();
}

absl::StatusOr<cairn::v1::ListTrialsResponse> StudyClient::ListAllTrials(
    const std::string& study_name) {
  cairn::v1::ListTrialsResponse all;
  cairn::v1::ListTrialsRequest request;
  request.set_parent(study_name);
  do {
    auto response = Call(&Stub::ListTrials, request);
    if (!response.ok()) return response.status();
    all.mutable_trials()->MergeFrom(response->trials());
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  return all;
}

}  // namespace cairn::cli
