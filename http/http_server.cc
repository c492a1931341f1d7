#include "http/http_server.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "civetweb.h"

namespace cairn::http {
namespace {

int BeginRequest(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  return static_cast<HttpServer*>(info->user_data)->Serve(conn);
}

void Send(mg_connection* conn, const HttpResponse& response) {
  mg_response_header_start(conn, response.status);
  mg_response_header_add(conn, "Content-Type", response.content_type.c_str(),
                         -1);
  const std::string length = absl::StrCat(response.body.size());
  mg_response_header_add(conn, "Content-Length", length.c_str(), -1);
  mg_response_header_add(conn, "X-Content-Type-Options", "nosniff", -1);
  for (const auto& [name, value] : response.headers) {
    mg_response_header_add(conn, name.c_str(), value.c_str(), -1);
  }
  mg_response_header_send(conn);
  mg_write(conn, response.body.data(), response.body.size());
}

HttpResponse TooLarge(size_t limit) {
  return {413,
          "application/json",
          absl::StrCat("{\"error\":{\"code\":8,\"status\":\"RESOURCE_",
                       "EXHAUSTED\",\"message\":\"request body larger than ",
                       limit, " bytes\"}}"),
          {}};
}

}  // namespace

int HttpServer::Serve(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  HttpRequest request;
  request.method = info->request_method != nullptr ? info->request_method : "";
  request.path = info->local_uri != nullptr ? info->local_uri : "/";
  request.query = info->query_string != nullptr ? info->query_string : "";
  if (const char* a = mg_get_header(conn, "Authorization"); a != nullptr) {
    request.authorization = a;
  }
  if (info->content_length > 0 &&
      static_cast<uint64_t>(info->content_length) > options_.max_body_bytes) {
    Send(conn, TooLarge(options_.max_body_bytes));
    return 413;
  }
  char buffer[16384];
  for (;;) {
    const int n = mg_read(conn, buffer, sizeof(buffer));
    if (n <= 0) break;
    request.body.append(buffer, static_cast<size_t>(n));
    if (request.body.size() > options_.max_body_bytes) {
      Send(conn, TooLarge(options_.max_body_bytes));
      return 413;
    }
  }
  const HttpResponse response = handler_(request);
  Send(conn, response);
  return response.status;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpServerOptions& options, HttpHandler handler) {
  std::unique_ptr<HttpServer> server(new HttpServer(options, handler));
  const std::string& ports = options.listen;
  const std::string threads = absl::StrCat(options.threads);
  const char* civet_options[] = {"listening_ports",
                                 ports.c_str(),
                                 "num_threads",
                                 threads.c_str(),
                                 "enable_keep_alive",
                                 "yes",
                                 "request_timeout_ms",
                                 "30000",
                                 nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  callbacks.begin_request = BeginRequest;
  mg_init_library(MG_FEATURES_DEFAULT);
  char error[256] = {0};
  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = civet_options;
  mg_error_data error_data;
  std::memset(&error_data, 0, sizeof(error_data));
  error_data.text = error;
  error_data.text_buffer_size = sizeof(error);
  server->context_ = mg_start2(&init, &error_data);
  if (server->context_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve HTTP on \"", options.listen,
        "\": ", error[0] != '\0' ? error : "civetweb failed to start"));
  }
  mg_server_port port;
  if (mg_get_server_ports(server->context_, 1, &port) < 1) {
    return absl::InternalError(
        absl::StrCat("no bound port for \"", options.listen, "\""));
  }
  server->port_ = port.port;
  return server;
}

HttpServer::~HttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

}  // namespace cairn::http
