// SageMakerKeyService: a token's AWS access key pair (auth/aws_keys.h), for
// `cairn token create --aws`. A thin adapter; admin only (permissions.h).
#ifndef CAIRN_SERVER_SAGEMAKER_KEY_SERVICE_H_
#define CAIRN_SERVER_SAGEMAKER_KEY_SERVICE_H_

#include "auth/authorizer.h"
#include "auth/aws_keys.h"
#include "auth/token_registry.h"
#include "cairn/v1/sagemaker.grpc.pb.h"

namespace cairn {

// Thread-safe. `keys` or `tokens` nullptr (--auth=none): every call is
// UNIMPLEMENTED.
class SageMakerKeyServiceImpl final
    : public cairn::v1::SageMakerKeyService::Service {
 public:
  SageMakerKeyServiceImpl(const auth::Authorizer* authorizer,
                          auth::TokenRegistry* tokens,
                          const auth::AwsKeys* keys)
      : authorizer_(authorizer), tokens_(tokens), keys_(keys) {}

  grpc::Status GetAwsAccessKey(grpc::ServerContext* context,
                               const cairn::v1::GetAwsAccessKeyRequest* request,
                               cairn::v1::AwsAccessKey* response) override;

 private:
  const auth::Authorizer* const authorizer_;
  auth::TokenRegistry* const tokens_;
  const auth::AwsKeys* const keys_;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_SAGEMAKER_KEY_SERVICE_H_
