// INTERNAL for an unparsable request becomes INVALID_ARGUMENT: see
// unparsable_request_interceptor.h.
#include "server/unparsable_request_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/limits.h"

namespace cairn {

const char* UnparsableRequestMessage() {
  static const std::string* message = new std::string(absl::StrCat(
      "request: could not be parsed: it nests messages deeper than "
      "protobuf's limit of 100 (conditional parameters may nest at most ",
      cairn::api::kMaxConditionalDepth,
      " deep) or is not a valid message of this method (e.g. a string that "
      "is not UTF-8)"));
  return message->c_str();
}

namespace {

using grpc::experimental::InterceptionHookPoints;

class UnparsableRequestInterceptor final
    : public grpc::experimental::Interceptor {
 public:
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      unparsable_ = true;
    }
    if (unparsable_ && methods->QueryInterceptionHookPoint(
                           InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::INTERNAL) {
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT, UnparsableRequestMessage()));
      }
    }
    methods->Proceed();
  }

 private:
  bool unparsable_ = false;
};

}  // namespace

grpc::experimental::Interceptor*
UnparsableRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo*) {
  return new UnparsableRequestInterceptor();
}

}  // namespace cairn
