// The gRPC side of the one authorization check: reads a call's
// `authorization` metadata and asks the auth::Authorizer (auth/authorizer.h).
#ifndef CAIRN_SERVER_AUTHORIZE_CALL_H_
#define CAIRN_SERVER_AUTHORIZE_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/authorizer.h"
#include "grpcpp/server_context.h"

namespace cairn {

// The caller of `context`'s call to `full_method` acting on `resource`
// (see Authorizer::Authorize). `authorizer` nullptr (a service nobody gave
// one): every call is refused, Internal (fail closed).
inline absl::StatusOr<auth::Principal> AuthorizeCall(
    const auth::Authorizer* authorizer, grpc::ServerContext* context,
    absl::string_view full_method, absl::string_view resource) {
  if (authorizer == nullptr) {
    return absl::InternalError("this service has no authorizer: refused");
  }
  absl::string_view authorization;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = absl::string_view(it->second.data(), it->second.size());
  }
  return authorizer->Authorize(authorization, full_method, resource);
}

}  // namespace cairn

#endif  // CAIRN_SERVER_AUTHORIZE_CALL_H_
