// AdminService's audit RPC: a thin adapter over audit::AuditLog::List.
#include "server/admin_service.h"
#include "server/status_util.h"
#include "util/time_proto.h"

namespace cairn {

grpc::Status AdminServiceImpl::ListAuditEvents(
    grpc::ServerContext* context,
    const cairn::v1::ListAuditEventsRequest* request,
    cairn::v1::ListAuditEventsResponse* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "ListAuditEvents");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (audit_log_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "this server keeps no audit log");
  }
  audit::AuditQuery query;
  if (request->has_start_time()) {
    query.start_time = util::FromProtoTimestamp(request->start_time());
  }
  query.principal = request->principal();
  query.page_size = request->page_size();
  query.page_token = request->page_token();
  absl::StatusOr<audit::AuditPage> page = audit_log_->List(query);
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (cairn::v1::AuditEvent& e : page->events) {
    *response->add_events() = std::move(e);
  }
  response->set_next_page_token(std::move(page->next_page_token));
  return grpc::Status::OK;
}

}  // namespace cairn
