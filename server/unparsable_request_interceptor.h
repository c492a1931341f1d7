// A request gRPC cannot parse never reaches a handler: gRPC answers INTERNAL
// with an empty message (protobuf's parser stops at 100 nested messages, so
// conditional parameters nested 49 deep end there, as does a string that is
// not UTF-8). This interceptor turns that answer into INVALID_ARGUMENT with
// a message saying why, so a client's bad input is never reported as the
// server's fault.
#ifndef CAIRN_SERVER_UNPARSABLE_REQUEST_INTERCEPTOR_H_
#define CAIRN_SERVER_UNPARSABLE_REQUEST_INTERCEPTOR_H_

#include "grpcpp/support/server_interceptor.h"

namespace cairn {

// Notes, after the request is received, whether gRPC could parse it (the
// received message is null when it could not); if not, rewrites the INTERNAL
// status about to be sent. Other calls pass through untouched. Stateless
// factory, one interceptor per call: thread-safe.
class UnparsableRequestInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

// The message an unparsable request gets (names the limits to look at).
const char* UnparsableRequestMessage();

}  // namespace cairn

#endif  // CAIRN_SERVER_UNPARSABLE_REQUEST_INTERCEPTOR_H_
