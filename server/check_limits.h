// The API's input limits (api/request_limits.h) as a
// grpc::Status: every handler checks its request with it right after
// authorization, before calling a component.
#ifndef CAIRN_SERVER_CHECK_LIMITS_H_
#define CAIRN_SERVER_CHECK_LIMITS_H_

#include "api/request_limits.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/status.h"
#include "server/status_util.h"

namespace cairn {

// OK, or INVALID_ARGUMENT naming the first field over its limit.
inline grpc::Status CheckLimits(const google::protobuf::Message& request) {
  return ToGrpcStatus(api::CheckRequestLimits(request));
}

}  // namespace cairn

#endif  // CAIRN_SERVER_CHECK_LIMITS_H_
