// HttpServer: an embedded HTTP(S) server (civetweb, from Debian) that hands
// every request to one handler. It parses nothing itself: civetweb reads
// the request; the handler sees method, path, query, body and the
// Authorization header, and returns status, content type and body.
//
// Plaintext only: Debian 12's civetweb 1.15 loads OpenSSL 3 at run time and
// crashes on the first TLS handshake (its own `civetweb` binary too), so
// cairnd does not serve HTTP when TLS is on (server/cairnd_http.cc).
#ifndef CAIRN_HTTP_HTTP_SERVER_H_
#define CAIRN_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace cairn::http {

struct HttpRequest {
  std::string method;         // "GET", "POST", ...
  std::string path;           // URL-decoded, without the query.
  std::string query;          // Raw query string, without '?'.
  std::string body;           // At most HttpServerOptions::max_body_bytes.
  std::string authorization;  // The Authorization header, "" if absent.
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
};

// Thread-safe; the handler is called from civetweb's worker threads, up to
// `threads` at once.
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

  // Called by civetweb for every request (public for its C callback).
  int Serve(::mg_connection* conn);

 private:
  HttpServer(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {}
  const HttpServerOptions options_;
  const HttpHandler handler_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_HTTP_SERVER_H_
