// See client_token.h.
#include "auth/client_token.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/client_interceptor.h"
#include "util/bounded_file.h"

namespace cairn::auth {
namespace {

// Adds the authorization metadata to every call.
class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* const header_;
};

class BearerInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(const std::string& token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_);
  }

 private:
  const std::string header_;
};

// A token is 70 characters; a token file is its first line. More than this
// is no token file (and the file may be endless: /dev/zero).
constexpr size_t kMaxTokenFileBytes = 4096;

// The first line of `path`, trimmed; NotFound naming `what` and the path.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path,
                                          absl::string_view what) {
  absl::StatusOr<std::string> text =
      util::ReadFileAtMost(path, kMaxTokenFileBytes);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat(what, ": no token: ", text.status().message()));
  }
  const std::string head = *std::move(text);
  std::string token(
      absl::StripAsciiWhitespace(head.substr(0, head.find('\n'))));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", path, "' holds an empty token"));
  }
  return token;
}

}  // namespace

absl::StatusOr<std::string> ReadClientToken(const std::string& token_file) {
  if (const char* env = std::getenv("CAIRN_TOKEN"); env && *env) {
    return std::string(absl::StripAsciiWhitespace(env));
  }
  if (!token_file.empty()) return ReadTokenFile(token_file, "--token-file");
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return std::string();
  const std::string path =
      (std::filesystem::path(home) / ".config/cairn/token").string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::string();
  return ReadTokenFile(path, "~/.config/cairn/token");
}

std::shared_ptr<grpc::Channel> NewAuthChannel(
    const std::string& target, const std::string& token,
    const grpc::ChannelArguments& args) {
  return NewAuthChannel(target, token, grpc::InsecureChannelCredentials(),
                        args);
}

std::shared_ptr<grpc::Channel> NewAuthChannel(
    const std::string& target, const std::string& token,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    const grpc::ChannelArguments& args) {
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      interceptors;
  if (!token.empty()) {
    interceptors.push_back(std::make_unique<BearerInterceptorFactory>(token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      target, std::move(credentials), args, std::move(interceptors));
}

}  // namespace cairn::auth
