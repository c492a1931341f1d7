// A thin synchronous client of cairn.v1.StudyService and AdminService for the
// CLI: one channel, a per-call deadline, and grpc::Status converted to
// absl::Status.
#ifndef CAIRN_CLI_CLIENT_H_
#define CAIRN_CLI_CLIENT_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "cairn/v1/job_service.grpc.pb.h"
#include "cairn/v1/sagemaker.grpc.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace cairn::cli {

// Converts a gRPC status to the absl::Status with the same code and message.
// UNAVAILABLE and DEADLINE_EXCEEDED messages also name `target` so the user
// sees which server the CLI tried; a connection cairnd closed during the
// handshake adds a hint at the TLS flags.
absl::Status FromGrpcStatus(const grpc::Status& status,
                            const std::string& target);

// Thread-compatible: use one StudyClient per thread.
class StudyClient {
 public:
  using Stub = cairn::v1::StudyService::Stub;
  using AdminStub = cairn::v1::AdminService::Stub;
  using JobStub = cairn::v1::JobService::Stub;
  using KeyStub = cairn::v1::SageMakerKeyService::Stub;

  // `target` is HOST:PORT; every call gets `timeout` as its deadline and
  // `authorization: Bearer <token>` (none if `token` is empty). The
  // connection uses `credentials` (auth/client_tls.h); null: plaintext.
  StudyClient(std::string target, std::chrono::milliseconds timeout,
              const std::string& token = "",
              std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  // Calls one unary RPC, e.g. Call(&Stub::GetStudy, request).
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                   Response*),
      const Request& request) {
    return Invoke(*stub_, method, request);
  }
  // The same for AdminService, e.g. Call(&AdminStub::Backup, request).
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (AdminStub::*method)(grpc::ClientContext*, const Request&,
                                        Response*),
      const Request& request) {
    return Invoke(*admin_stub_, method, request);
  }

  // The same for JobService, e.g. Call(&JobStub::GetJob, request).
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (JobStub::*method)(grpc::ClientContext*, const Request&,
                                      Response*),
      const Request& request) {
    return Invoke(*job_stub_, method, request);
  }

  // The same for SageMakerKeyService.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (KeyStub::*method)(grpc::ClientContext*, const Request&,
                                      Response*),
      const Request& request) {
    return Invoke(*key_stub_, method, request);
  }

  // Resolves a STUDY argument ("studies/N", N or a display name) to the
  // Study, with GetStudy or LookupStudy.
  absl::StatusOr<cairn::v1::Study> ResolveStudy(const std::string& arg);

  // Resolves a STUDY argument to its name; only display names need an RPC.
  absl::StatusOr<std::string> ResolveStudyName(const std::string& arg);

  // Every trial of study `study_name` (a resource name), page by page.
  absl::StatusOr<cairn::v1::ListTrialsResponse> ListAllTrials(
      const std::string& study_name);

  const std::string& target() const { return target_; }

 private:
  template <typename StubT, typename Request, typename Response>
  absl::StatusOr<Response> Invoke(
      StubT& stub,
      grpc::Status (StubT::*method)(grpc::ClientContext*, const Request&,
                                    Response*),
      const Request& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout_);
    Response response;
    grpc::Status status = (stub.*method)(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status, target_);
    return response;
  }

  std::string target_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Stub> stub_;
  std::unique_ptr<AdminStub> admin_stub_;
  std::unique_ptr<JobStub> job_stub_;
  std::unique_ptr<KeyStub> key_stub_;
};

}  // namespace cairn::cli

#endif  // CAIRN_CLI_CLIENT_H_
