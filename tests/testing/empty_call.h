// A gRPC call by method name with an empty request, for tests that reach
// every method (or a service without generated stubs) the same way.
#ifndef CAIRN_TESTS_TESTING_EMPTY_CALL_H_
#define CAIRN_TESTS_TESTING_EMPTY_CALL_H_

#include <memory>
#include <string>

#include "grpcpp/channel.h"
#include "grpcpp/support/status.h"

namespace cairn::testing {

// Calls `method` ("/package.Service/Method") on `channel` with an empty
// request message (a client-streaming method gets one empty message) and a
// 10 s deadline, sending `token` as a bearer token unless it is empty.
// Returns the call's status; when `response` is not null, the response's
// serialized bytes go there.
grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& method,
                                  const std::string& token,
                                  std::string* response = nullptr);

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_EMPTY_CALL_H_
