// HttpServer: an embedded HTTP(S) server (cpp-httplib, from Debian) that
// hands every request to one handler. It parses nothing itself: the library
// reads the request; the handler sees method, path, query, body and the
// Authorization header, and returns status, content type and body. With
// TLS files it serves HTTPS only (http/server_tls.h).
#ifndef CAIRN_HTTP_HTTP_SERVER_H_
#define CAIRN_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "http/server_tls.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace cairn::http {

struct HttpRequest {
  std::string method;         // "GET", "POST", ...
  std::string path;           // URL-decoded, without the query.
  std::string query;          // Raw query string, without '?'.
  std::string body;           // At most HttpServerOptions::max_body_bytes.
  std::string authorization;  // The Authorization header, "" if absent.
  std::string content_type;   // The Content-Type header, "" if absent.
  // The client's address as gRPC writes peers ("ipv4:127.0.0.1:5555",
  // "ipv6:[::1]:5555"): what the audit log records for REST calls.
  std::string peer;
  std::string host;  // The Host header, "" if absent.
  // Every header (name as sent, value), for signatures over headers
  // (SageMaker's SigV4).
  std::vector<std::pair<std::string, std::string>> headers;
  bool https = false;  // Whether it came over TLS.
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Further headers (name, value).
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  // "HOST:PORT" with a numeric IPv4 host, or "[IPv6]:PORT"; port 0 picks a
  // free port (see HttpServer::port).
  std::string listen;
  // Larger bodies are refused with 413 before the handler runs.
  size_t max_body_bytes = size_t{4} << 20;
  int threads = 8;
  // HTTPS with these files when tls.enabled(); plaintext otherwise.
  ServerTlsFiles tls;
};

// Thread-safe; the handler is called from the server's worker threads, up
// to `threads` at once. The port is bound without SO_REUSEPORT: one port,
// one server.
class HttpServer {
 public:
  // Binds and starts serving. Errors name the listen address (or the TLS
  // file) at fault.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpServerOptions& options, HttpHandler handler);
  // Stops serving; waits for requests in progress.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port.
  int port() const { return port_; }

  // Whether this server speaks HTTPS.
  bool tls() const { return certificate_ != nullptr; }

 private:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  // Creates server_ (with certificate_ for HTTPS) and its routes.
  absl::Status Create();
  absl::Status Bind();

  const HttpServerOptions options_;
  const HttpHandler handler_;
  std::unique_ptr<ServerCertificate> certificate_;  // Outlives server_.
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_HTTP_SERVER_H_
