// absl::Status <-> grpc::Status: the codes map one-to-one.
#ifndef CAIRN_SERVER_STATUS_UTIL_H_
#define CAIRN_SERVER_STATUS_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace cairn {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace cairn

#endif  // CAIRN_SERVER_STATUS_UTIL_H_
