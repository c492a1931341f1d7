// Frees the call slot a call took in AuthorizeCall (server/authorize_call.h,
// auth/call_slots.h) when its handler is done: at PRE_SEND_STATUS, and when
// the call is destroyed for a call that never got there (a cancelled one).
#ifndef CAIRN_SERVER_CALL_SLOTS_INTERCEPTOR_H_
#define CAIRN_SERVER_CALL_SLOTS_INTERCEPTOR_H_

#include "auth/call_slots.h"
#include "grpcpp/support/server_interceptor.h"

namespace cairn {

// `slots` is not owned and must outlive the server. Thread-safe.
class CallSlotsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallSlotsInterceptorFactory(auth::CallSlots* slots)
      : slots_(slots) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  auth::CallSlots* const slots_;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_CALL_SLOTS_INTERCEPTOR_H_
