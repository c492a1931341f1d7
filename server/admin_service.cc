// Thin gRPC adapter over BackupStore (the token RPCs: admin_tokens.cc).
#include "server/admin_service.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/authorize_call.h"
#include "server/check_limits.h"
#include "server/status_util.h"
#include "spdlog/spdlog.h"
#include "store/backup.h"
#include "util/time_proto.h"

namespace cairn {

absl::StatusOr<auth::Principal> AdminServiceImpl::Authorize(
    grpc::ServerContext* context, absl::string_view method) const {
  return AuthorizeCall(authorizer_, context,
                       absl::StrCat("/cairn.v1.AdminService/", method), "");
}

grpc::Status AdminServiceImpl::Backup(grpc::ServerContext* context,
                                      const cairn::v1::BackupRequest* request,
                                      cairn::v1::BackupResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "Backup");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<BackupResult> result =
      BackupStore(*store_, data_dir_, request->destination());
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_destination(result->path);
  response->set_sequence_number(result->sequence_number);
  response->set_study_count(result->studies);
  response->set_trial_count(result->trials);
  response->set_file_count(result->files);
  response->set_size_bytes(result->size_bytes);
  *response->mutable_duration() = util::ToProtoDuration(result->elapsed);
  spdlog::info(
      "backup written to {}: {} studies, {} trials, {} files, {} bytes",
      result->path, result->studies, result->trials, result->files,
      result->size_bytes);
  return grpc::Status::OK;
}

}  // namespace cairn
