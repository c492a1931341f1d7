// The gRPC AdminService: operations on the server itself (backup). The one
// place where the admin role will be checked once authentication exists.
// No logic lives here (see store/backup.h).
#ifndef CAIRN_SERVER_ADMIN_SERVICE_H_
#define CAIRN_SERVER_ADMIN_SERVICE_H_

#include <string>
#include <utility>

#include "cairn/v1/admin_service.grpc.pb.h"
#include "store/store.h"

namespace cairn {

// Thread-safe: BackupStore is.
class AdminServiceImpl final : public cairn::v1::AdminService::Service {
 public:
  // `store` is cairnd's store, kept in `data_dir`; not owned, must outlive
  // the service.
  AdminServiceImpl(Store* store, std::string data_dir)
      : store_(store), data_dir_(std::move(data_dir)) {}

  grpc::Status Backup(grpc::ServerContext*,
                      const cairn::v1::BackupRequest* request,
                      cairn::v1::BackupResponse* response) override;

 private:
  Store* const store_;
  const std::string data_dir_;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_ADMIN_SERVICE_H_
