// AdminService's token RPCs: thin adapters over auth::TokenRegistry.
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/roles.h"
#include "auth/permissions.h"
#include "server/admin_service.h"
#include "server/check_limits.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"
#include "util/time_proto.h"

namespace cairn {

grpc::Status AdminServiceImpl::CheckTokens() const {
  if (tokens_ != nullptr) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "this server keeps no tokens (--auth=none)");
}

grpc::Status AdminServiceImpl::CreateToken(
    grpc::ServerContext* context, const cairn::v1::CreateTokenRequest* request,
    cairn::v1::CreateTokenResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "CreateToken");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  if (grpc::Status s = CheckTokens(); !s.ok()) return s;
  const absl::Duration ttl = util::FromProtoDuration(request->ttl());
  if (ttl < absl::ZeroDuration()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("ttl: ", absl::FormatDuration(ttl), " is negative")));
  }
  absl::StatusOr<auth::CreatedToken> created =
      tokens_->Create(request->name(), request->role(), ttl, absl::Now());
  if (!created.ok()) return ToGrpcStatus(created.status());
  spdlog::info("token '{}' ({}) created by '{}'", created->token.name(),
               std::string(api::RoleName(created->token.role())), caller->name);
  *response->mutable_token() = created->token;
  response->set_secret(created->secret);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ListTokens(
    grpc::ServerContext* context, const cairn::v1::ListTokensRequest*,
    cairn::v1::ListTokensResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "ListTokens");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckTokens(); !s.ok()) return s;
  for (cairn::v1::Token& t : tokens_->List()) {
    *response->add_tokens() = std::move(t);
  }
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::RevokeToken(
    grpc::ServerContext* context, const cairn::v1::RevokeTokenRequest* request,
    cairn::v1::Token* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "RevokeToken");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  if (grpc::Status s = CheckTokens(); !s.ok()) return s;
  absl::StatusOr<cairn::v1::Token> token = tokens_->Revoke(request->name());
  if (!token.ok()) return ToGrpcStatus(token.status());
  spdlog::info("token '{}' revoked by '{}'", token->name(), caller->name);
  *response = *std::move(token);
  return grpc::Status::OK;
}

}  // namespace cairn
