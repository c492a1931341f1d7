// The gRPC AdminService: operations on the server itself (backup, tokens,
// the audit log).
// Every RPC needs the admin role (auth/permissions.cc). No logic lives here
// (see store/backup.h, auth/token_registry.h and audit/audit_log.h).
#ifndef CAIRN_SERVER_ADMIN_SERVICE_H_
#define CAIRN_SERVER_ADMIN_SERVICE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "audit/audit_log.h"
#include "auth/authorizer.h"
#include "auth/token_registry.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "store/store.h"

namespace cairn {

// Thread-safe: BackupStore and TokenRegistry are.
class AdminServiceImpl final : public cairn::v1::AdminService::Service {
 public:
  // `store` is cairnd's store, kept in `data_dir`; not owned, must outlive
  // the service.
  AdminServiceImpl(AdminStore* store, std::string data_dir)
      : store_(store), data_dir_(std::move(data_dir)) {}
  // Checks every call; not owned; call before serving. Without one, every
  // call is refused.
  void set_authorizer(const auth::Authorizer* authorizer) {
    authorizer_ = authorizer;
  }
  // Enables the token RPCs (UNIMPLEMENTED without). Not owned.
  void set_token_registry(auth::TokenRegistry* tokens) { tokens_ = tokens; }
  // Enables ListAuditEvents (UNIMPLEMENTED without). Not owned.
  void set_audit_log(const audit::AuditLog* log) { audit_log_ = log; }

  grpc::Status Backup(grpc::ServerContext* context,
                      const cairn::v1::BackupRequest* request,
                      cairn::v1::BackupResponse* response) override;
  // In admin_tokens.cc.
  grpc::Status CreateToken(grpc::ServerContext* context,
                           const cairn::v1::CreateTokenRequest* request,
                           cairn::v1::CreateTokenResponse* response) override;
  grpc::Status ListTokens(grpc::ServerContext* context,
                          const cairn::v1::ListTokensRequest* request,
                          cairn::v1::ListTokensResponse* response) override;
  grpc::Status RevokeToken(grpc::ServerContext* context,
                           const cairn::v1::RevokeTokenRequest* request,
                           cairn::v1::Token* response) override;
  // In admin_audit.cc.
  grpc::Status ListAuditEvents(
      grpc::ServerContext* context,
      const cairn::v1::ListAuditEventsRequest* request,
      cairn::v1::ListAuditEventsResponse* response) override;

 private:
  // The caller of `method` (an AdminService method's short name).
  absl::StatusOr<auth::Principal> Authorize(grpc::ServerContext* context,
                                            absl::string_view method) const;
  // UNIMPLEMENTED when no token registry was set.
  grpc::Status CheckTokens() const;

  AdminStore* const store_;
  const std::string data_dir_;
  const auth::Authorizer* authorizer_ = nullptr;
  auth::TokenRegistry* tokens_ = nullptr;
  const audit::AuditLog* audit_log_ = nullptr;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_ADMIN_SERVICE_H_
