// gRPC server reflection (grpc.reflection.v1alpha, the protocol grpcurl and
// grpc_cli speak) behind the `viewer` role: it lists cairnd's services and
// answers with their file descriptors from the generated descriptor pool.
// Debian's gRPC 1.51 reflection plugin cannot check a token, so cairnd
// serves this one instead (proto/grpc/reflection/v1alpha/reflection.proto).
#ifndef CAIRN_SERVER_REFLECTION_SERVICE_H_
#define CAIRN_SERVER_REFLECTION_SERVICE_H_

#include <string>
#include <vector>

#include "auth/authorizer.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"

namespace cairn {

class ReflectionService final
    : public grpc::reflection::v1alpha::ServerReflection::Service {
 public:
  // `services`: the full names list_services answers with (each must be in
  // the generated descriptor pool). `authorizer` is not owned; nullptr
  // refuses every call (fail closed).
  ReflectionService(std::vector<std::string> services,
                    const auth::Authorizer* authorizer)
      : services_(std::move(services)), authorizer_(authorizer) {}

  // Authorizes the stream (the caller needs `viewer`), then answers each
  // request: list_services, file_by_filename, file_containing_symbol,
  // file_containing_extension and all_extension_numbers_of_type. A file
  // comes with the files it imports; an unknown name gets an error_response
  // with NOT_FOUND, and the stream goes on.
  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<
          grpc::reflection::v1alpha::ServerReflectionResponse,
          grpc::reflection::v1alpha::ServerReflectionRequest>* stream) override;

  // The answer to one request (no authorization: ServerReflectionInfo's).
  grpc::reflection::v1alpha::ServerReflectionResponse Answer(
      const grpc::reflection::v1alpha::ServerReflectionRequest& request) const;

 private:
  const std::vector<std::string> services_;
  const auth::Authorizer* const authorizer_;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_REFLECTION_SERVICE_H_
