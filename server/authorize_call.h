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

namespace authorize_call_internal {

// The call's `authorization` metadata ("" if absent).
inline absl::string_view Authorization(grpc::ServerContext* context) {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return "";
  return absl::string_view(it->second.data(), it->second.size());
}

// `caller`, once it holds one of its call slots for `context`'s call.
inline absl::StatusOr<auth::Principal> TakeSlot(
    const auth::Authorizer& authorizer, grpc::ServerContext* context,
    absl::StatusOr<auth::Principal> caller) {
  if (caller.ok() && authorizer.call_slots() != nullptr) {
    const grpc::ServerContextBase* call = context;
    if (absl::Status s = authorizer.call_slots()->Acquire(call, caller->name);
        !s.ok()) {
      return s;
    }
  }
  return caller;
}

}  // namespace authorize_call_internal

// The caller of `context`'s call to `full_method` acting on `resource`
// (see Authorizer::Authorize), which then holds one of the caller's call
// slots (Authorizer::call_slots) until CallSlotsInterceptorFactory's
// interceptor frees it at the call's end; ResourceExhausted when the caller
// has none left. `authorizer` nullptr (a service nobody gave one): every
// call is refused, Internal (fail closed).
inline absl::StatusOr<auth::Principal> AuthorizeCall(
    const auth::Authorizer* authorizer, grpc::ServerContext* context,
    absl::string_view full_method, absl::string_view resource) {
  if (authorizer == nullptr) {
    return absl::InternalError("this service has no authorizer: refused");
  }
  return authorize_call_internal::TakeSlot(
      *authorizer, context,
      authorizer->Authorize(authorize_call_internal::Authorization(context),
                            full_method, resource));
}

// As AuthorizeCall for a client stream, before its first message is read
// (Authorizer::AuthorizeStream): a caller without a valid token never gets
// to hold the handler's thread waiting for one.
inline absl::StatusOr<auth::Principal> AuthorizeStreamCall(
    const auth::Authorizer* authorizer, grpc::ServerContext* context,
    absl::string_view full_method) {
  if (authorizer == nullptr) {
    return absl::InternalError("this service has no authorizer: refused");
  }
  return authorize_call_internal::TakeSlot(
      *authorizer, context,
      authorizer->AuthorizeStream(
          authorize_call_internal::Authorization(context), full_method));
}

}  // namespace cairn

#endif  // CAIRN_SERVER_AUTHORIZE_CALL_H_
