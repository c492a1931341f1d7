// The gRPC side of the audit log: a server interceptor that sees each call's
// method, caller, resource, peer and final status, and hands the calls that
// audit::AuditLog::ShouldRecord picks to AuditLog::Record, before the
// response is sent (the record is durable first; see audit/audit_log.h).
// The services do nothing for it.
//
// Wiring (first in the list, so that the latency the metrics interceptor
// measures includes the audit write):
//   builder.experimental().SetInterceptorCreators(creators);
// with creators = {MakeAuditInterceptorFactory(...), metrics...}.
#ifndef CAIRN_SERVER_AUDIT_INTERCEPTOR_H_
#define CAIRN_SERVER_AUDIT_INTERCEPTOR_H_

#include <memory>

#include "audit/audit_log.h"
#include "auth/authorizer.h"
#include "grpcpp/support/server_interceptor.h"
#include "trials/observer.h"

namespace cairn {

// Creates one interceptor per call. The principal is the token the call's
// `authorization` metadata names (auth::Authorizer::Identify: the same
// token the handler's check saw); the resource comes from the first request
// message and, when the call succeeded, the response (audit/call_resource.h;
// only for cairn.v1 services, whose messages are generated protobuf
// classes); the peer is gRPC's. A failed Record is logged and the call's own
// status is still sent (its state change, if any, already happened).
//
// `log` and `authorizer` are not owned and must outlive the server.
// Thread-safe.
class AuditInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `observer` (may be null) gets the time of each recorded call's audit
  // write, as the call's "audit" phase (trials/observer.h).
  AuditInterceptorFactory(audit::AuditLog* log,
                          const auth::Authorizer* authorizer,
                          StudyObserver* observer = nullptr)
      : log_(log), authorizer_(authorizer), observer_(observer) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  audit::AuditLog* const log_;
  const auth::Authorizer* const authorizer_;
  StudyObserver* const observer_;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_AUDIT_INTERCEPTOR_H_
