// See call_slots_interceptor.h.
#include "server/call_slots_interceptor.h"

namespace cairn {
namespace {

using grpc::experimental::InterceptionHookPoints;

class CallSlotsInterceptor final : public grpc::experimental::Interceptor {
 public:
  CallSlotsInterceptor(auth::CallSlots* slots, const void* call)
      : slots_(slots), call_(call) {}
  ~CallSlotsInterceptor() override { slots_->Release(call_); }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      slots_->Release(call_);
    }
    methods->Proceed();
  }

 private:
  auth::CallSlots* const slots_;
  const void* const call_;
};

}  // namespace

grpc::experimental::Interceptor*
CallSlotsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  const grpc::ServerContextBase* call = info->server_context();
  return new CallSlotsInterceptor(slots_, call);
}

}  // namespace cairn
