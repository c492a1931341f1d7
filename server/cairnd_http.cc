// Cairnd::StartHttp: the REST API (Cairn's and AI Platform's) and web UI on
// --http-listen. The REST handlers call this cairnd's gRPC server through an
// in-process channel, so tokens, roles, input limits, audit and metrics are
// those of gRPC.
#include <filesystem>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/channel_arguments.h"
#include "http/rest_api.h"
#include "http/web_handler.h"
#include "server/cairnd.h"
#include "server/listen_policy.h"
#include "spdlog/spdlog.h"

namespace cairn {

absl::Status Cairnd::StartHttp(const CairndOptions& options) {
  if (options.http_listen.empty()) return absl::OkStatus();
  const bool https = options.tls.enabled();
  // The loopback rule of server/listen_policy.h, as for gRPC.
  if (!IsLoopbackListen(options.http_listen)) {
    if (!options.auth) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--http-listen '", options.http_listen,
          "' is reachable from the network: --auth=none serves loopback only"));
    }
    if (!https && !options.insecure) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--http-listen '", options.http_listen,
          "' is reachable from the network, where tokens would travel in "
          "plaintext: give --tls-cert and --tls-key (HTTPS), or pass "
          "--insecure to serve plaintext anyway"));
    }
    if (!https) {
      spdlog::warn(
          "cairnd: --insecure: serving the web UI and REST API in plaintext "
          "on {}, reachable from the network",
          options.http_listen);
    }
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto api = std::make_unique<http::RestApi>(
      cairn::v1::StudyService::NewStub(server_->InProcessChannel(args)));
  auto aiplatform = std::make_unique<http::AiPlatformApi>(
      cairn::v1::JobService::NewStub(server_->InProcessChannel(args)));
  auto handler = std::make_shared<http::WebHandler>(
      std::move(api), std::move(aiplatform), http::kDefaultChartJsPath);
  handler->set_sagemaker(MakeSageMakerApi(options));
  handler->set_cloudwatch_logs(MakeCloudWatchLogsApi());
  http::HttpServerOptions http_options;
  http_options.listen = options.http_listen;
  if (https) {  // The same files as gRPC's TLS: HTTPS only, never plaintext.
    http_options.tls.cert = options.tls.cert_file;
    http_options.tls.key = options.tls.key_file;
    http_options.tls.client_ca = options.tls.client_ca_file;
  }
  auto server = http::HttpServer::Start(
      http_options,
      [handler](const http::HttpRequest& r) { return handler->Handle(r); });
  if (!server.ok()) {
    return absl::Status(
        server.status().code(),
        absl::StrCat("--http-listen: ", server.status().message()));
  }
  http_server_ = std::move(*server);
  spdlog::info("cairnd: web UI and REST API on {}://{} (port {})",
               https ? "https" : "http", options.http_listen,
               http_server_->port());
  return absl::OkStatus();
}

int Cairnd::http_port() const {
  return http_server_ != nullptr ? http_server_->port() : 0;
}

}  // namespace cairn
