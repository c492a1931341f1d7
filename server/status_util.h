// absl::Status -> grpc::Status (the codes map one-to-one), and a handler's
// reply from a StatusOr.
#ifndef CAIRN_SERVER_STATUS_UTIL_H_
#define CAIRN_SERVER_STATUS_UTIL_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"

namespace cairn {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// Moves a StatusOr's value into *out and answers OK, or answers its status
// (leaving *out untouched).
template <typename T, typename U>
grpc::Status Reply(absl::StatusOr<T> result, U* out) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *out = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace cairn

#endif  // CAIRN_SERVER_STATUS_UTIL_H_
