// Per-call audit interceptor: the resource at POST_RECV_MESSAGE (first
// message) and PRE_SEND_MESSAGE, one AuditLog::Record at PRE_SEND_STATUS.
#include "server/audit_interceptor.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "audit/call_peer.h"
#include "audit/call_resource.h"
#include "google/protobuf/message.h"
#include "grpcpp/server_context.h"
#include "spdlog/spdlog.h"

namespace cairn {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

// The methods whose messages are generated protobuf classes (gRPC's own
// services, such as health checking, may use raw byte buffers).
bool HasProtoMessages(absl::string_view method) {
  return absl::StartsWith(method, "/cairn.v1.");
}

class AuditInterceptor final : public grpc::experimental::Interceptor {
 public:
  AuditInterceptor(audit::AuditLog* log, const auth::Authorizer* authorizer,
                   StudyObserver* observer, grpc::ServerContextBase* context,
                   std::string method)
      : log_(log),
        authorizer_(authorizer),
        observer_(observer),
        context_(context),
        method_(std::move(method)),
        read_messages_(HasProtoMessages(method_)) {}

  void Intercept(InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE)) {
      OnRequest(methods->GetRecvMessage());
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      OnResponse(methods->GetSendMessage());
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      OnStatus(methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  void OnRequest(const void* message) {
    if (!read_messages_ || message == nullptr || seen_request_) return;
    seen_request_ = true;
    request_resource_ = audit::RequestResource(
        *static_cast<const google::protobuf::Message*>(message));
  }

  void OnResponse(const void* message) {
    if (!read_messages_ || message == nullptr) return;
    response_resource_ = audit::ResponseResource(
        *static_cast<const google::protobuf::Message*>(message));
  }

  void OnStatus(const grpc::Status& status) {
    const int code = static_cast<int>(status.error_code());
    if (!log_->ShouldRecord(method_, code)) return;
    // Only cairn.v1's methods (registered, so a bounded label set).
    PhaseClock clock(read_messages_ ? observer_ : nullptr, ShortMethod());
    cairn::v1::AuditEvent event;
    if (std::optional<auth::Principal> who = Identify(); who.has_value()) {
      event.set_principal(std::move(who->name));
      event.set_role(who->role);
    }
    event.set_method(method_);
    event.set_resource(response_resource_.empty() ? request_resource_
                                                  : response_resource_);
    event.set_code(code);
    event.set_message(status.error_message());
    event.set_peer(
        audit::CallPeer(context_->peer(), Metadata(audit::kHttpPeerMetadata)));
    if (absl::Status s = log_->Record(std::move(event)); !s.ok()) {
      spdlog::error("audit log: cannot record a call of {}: {}", method_,
                    std::string(s.message()));
    }
    clock.Lap(call_phase::kAudit);
  }

  // "SuggestTrials" of "/cairn.v1.StudyService/SuggestTrials".
  std::string_view ShortMethod() const {
    std::string_view m = method_;
    const size_t slash = m.rfind('/');
    return slash == std::string_view::npos ? m : m.substr(slash + 1);
  }

  std::optional<auth::Principal> Identify() const {
    return authorizer_->Identify(Metadata("authorization"));
  }

  // The call's metadata `key`, "" if absent.
  absl::string_view Metadata(const char* key) const {
    const auto& metadata = context_->client_metadata();
    auto it = metadata.find(key);
    if (it == metadata.end()) return "";
    return absl::string_view(it->second.data(), it->second.size());
  }

  audit::AuditLog* const log_;
  const auth::Authorizer* const authorizer_;
  StudyObserver* const observer_;
  grpc::ServerContextBase* const context_;
  const std::string method_;
  const bool read_messages_;
  // gRPC runs one call's interception points one at a time.
  bool seen_request_ = false;
  std::string request_resource_;
  std::string response_resource_;
};

}  // namespace

grpc::experimental::Interceptor*
AuditInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new AuditInterceptor(log_, authorizer_, observer_,
                              info->server_context(),
                              info->method() == nullptr ? "" : info->method());
}

}  // namespace cairn
