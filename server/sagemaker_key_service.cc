// See sagemaker_key_service.h.
#include "server/sagemaker_key_service.h"

#include "absl/strings/str_cat.h"
#include "server/authorize_call.h"
#include "server/check_limits.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"

namespace cairn {

grpc::Status SageMakerKeyServiceImpl::GetAwsAccessKey(
    grpc::ServerContext* context,
    const cairn::v1::GetAwsAccessKeyRequest* request,
    cairn::v1::AwsAccessKey* response) {
  absl::StatusOr<auth::Principal> caller = AuthorizeCall(
      authorizer_, context, "/cairn.v1.SageMakerKeyService/GetAwsAccessKey",
      request->name());
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  if (tokens_ == nullptr || keys_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "this server keeps no tokens (--auth=none)");
  }
  for (const cairn::v1::Token& token : tokens_->List()) {
    if (token.name() != request->name()) continue;
    if (token.revoked()) {
      return ToGrpcStatus(absl::FailedPreconditionError(
          absl::StrCat("token '", token.name(), "' was revoked")));
    }
    const auth::AwsKeyPair pair = keys_->For(token);
    response->set_access_key_id(pair.access_key_id);
    response->set_secret_access_key(pair.secret_access_key);
    spdlog::info("AWS key of token '{}' shown to '{}'", token.name(),
                 caller->name);
    return grpc::Status::OK;
  }
  return ToGrpcStatus(absl::NotFoundError(
      absl::StrCat("name: no token named '", request->name(), "'")));
}

}  // namespace cairn
