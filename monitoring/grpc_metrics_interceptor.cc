// Per-call interceptor: start time at creation, one RecordRpc at
// PRE_SEND_STATUS (or CANCELLED at destruction if no status was sent).
#include "monitoring/grpc_metrics_interceptor.h"

#include <chrono>

#include "google/protobuf/descriptor.h"

namespace cairn::monitoring {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

class GrpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  GrpcMetricsInterceptor(Metrics* metrics, std::string method)
      : metrics_(metrics),
        method_(std::move(method)),
        start_(std::chrono::steady_clock::now()) {}

  ~GrpcMetricsInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start_;
    metrics_->RecordRpc(method_, GrpcCodeName(code), elapsed.count());
  }

  Metrics* const metrics_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
  // gRPC runs one call's interception points one at a time.
  bool recorded_ = false;
};

}  // namespace

std::string_view GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

std::string GrpcMethodLabel(std::string_view full_method) {
  // "/cairn.v1.StudyService/SuggestTrials" -> service and method.
  if (full_method.size() < 4 || full_method[0] != '/') return "unknown";
  size_t slash = full_method.rfind('/');
  if (slash == 0 || slash + 1 >= full_method.size()) return "unknown";
  std::string_view service = full_method.substr(1, slash - 1);
  std::string_view method = full_method.substr(slash + 1);
  const google::protobuf::ServiceDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          std::string(service));
  if (descriptor == nullptr ||
      descriptor->FindMethodByName(std::string(method)) == nullptr) {
    return "unknown";
  }
  return std::string(method);
}

grpc::experimental::Interceptor*
GrpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new GrpcMetricsInterceptor(metrics_, MethodLabel(info->method()));
}

std::string GrpcMetricsInterceptorFactory::MethodLabel(
    const char* full_method) {
  std::string path = full_method == nullptr ? "" : full_method;
  {
    absl::MutexLock lock(&mu_);
    auto it = labels_.find(path);
    if (it != labels_.end()) return it->second;
  }
  std::string label = GrpcMethodLabel(path);
  if (label != "unknown") {
    absl::MutexLock lock(&mu_);
    labels_.emplace(std::move(path), label);
  }
  return label;
}

std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeGrpcMetricsInterceptors(Metrics* metrics) {
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      creators;
  creators.push_back(std::make_unique<GrpcMetricsInterceptorFactory>(metrics));
  return creators;
}

}  // namespace cairn::monitoring
