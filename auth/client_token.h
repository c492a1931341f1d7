// The client side of authentication, for the CLI and every C++ client:
// where the token comes from, and a channel that sends it with every call.
#ifndef CAIRN_AUTH_CLIENT_TOKEN_H_
#define CAIRN_AUTH_CLIENT_TOKEN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace cairn::auth {

// The token a client sends: $CAIRN_TOKEN if set and non-empty; else the
// first line of `token_file` (the --token-file flag, which the CLI fills
// from $CAIRN_TOKEN_FILE when absent) if non-empty; else of
// ~/.config/cairn/token if it exists; else "" (calls then go without one).
// NotFound naming the file if `token_file` was given but cannot be read;
// InvalidArgument if the token found is empty.
absl::StatusOr<std::string> ReadClientToken(const std::string& token_file);

// A channel to `target` over `credentials` (with `args`) whose every call
// carries `authorization: Bearer <token>` (none if `token` is empty). The
// token travels as metadata added by a client interceptor, so it goes over
// plaintext (loopback) and TLS channels alike; make TLS credentials with
// NewClientChannelCredentials (auth/client_tls.h).
std::shared_ptr<grpc::Channel> NewAuthChannel(
    const std::string& target, const std::string& token,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    const grpc::ChannelArguments& args = grpc::ChannelArguments());

// The same over plaintext (grpc::InsecureChannelCredentials): for loopback
// clients, such as training jobs and tests.
std::shared_ptr<grpc::Channel> NewAuthChannel(
    const std::string& target, const std::string& token,
    const grpc::ChannelArguments& args = grpc::ChannelArguments());

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_CLIENT_TOKEN_H_
