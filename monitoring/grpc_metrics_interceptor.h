// A gRPC server interceptor recording every call's method, status code and
// latency in cairn::monitoring::Metrics (cairn_grpc_requests_total and
// cairn_grpc_request_duration_seconds).
//
// Wiring:
//   grpc::ServerBuilder builder;
//   builder.experimental().SetInterceptorCreators(
//       cairn::monitoring::MakeGrpcMetricsInterceptors(metrics.get()));
#ifndef CAIRN_MONITORING_GRPC_METRICS_INTERCEPTOR_H_
#define CAIRN_MONITORING_GRPC_METRICS_INTERCEPTOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/server_interceptor.h"
#include "monitoring/metrics.h"

namespace cairn::monitoring {

// The canonical name of a gRPC status code: "OK", "NOT_FOUND", ...
std::string_view GrpcCodeName(grpc::StatusCode code);

// The `method` label of a full gRPC method path: "/pkg.Service/Method" gives
// "Method" when the method is known to the generated protobuf descriptor pool
// (any service linked into the binary), else "unknown", so clients calling
// made-up methods cannot grow the label set.
std::string GrpcMethodLabel(std::string_view full_method);

// Creates one interceptor per call. The latency runs from the creation of the
// call's interceptors (when the server starts the call) to the moment its
// status is sent; a call that ends without sending one (e.g. the server shuts
// down) is recorded as CANCELLED. Works for unary and streaming calls of the
// synchronous, callback and async APIs.
//
// `metrics` is not owned and must outlive the server. Thread-safe.
class GrpcMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit GrpcMetricsInterceptorFactory(Metrics* metrics)
      : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  // GrpcMethodLabel, cached for known methods only (a bounded set).
  std::string MethodLabel(const char* full_method);

  Metrics* const metrics_;
  absl::Mutex mu_;
  std::unordered_map<std::string, std::string> labels_ ABSL_GUARDED_BY(mu_);
};

// The creators list for ServerBuilder::experimental().SetInterceptorCreators:
// just the metrics interceptor.
std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MakeGrpcMetricsInterceptors(Metrics* metrics);

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_GRPC_METRICS_INTERCEPTOR_H_
