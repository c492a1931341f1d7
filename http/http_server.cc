// See http_server.h.
#include "http/http_server.h"

#include <sys/socket.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace cairn::http {
namespace {

// The error body of the REST API for what the library refuses itself.
std::string ErrorJson(int code, const char* status, const std::string& msg) {
  return absl::StrCat("{\"error\":{\"code\":", code, ",\"status\":\"", status,
                      "\",\"message\":\"", msg, "\"}}");
}

// SO_REUSEADDR only (the library's default adds SO_REUSEPORT, which would
// let a second server share the port).
void ReuseAddressOnly(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

struct HostPort {
  std::string host;
  int port = 0;
};

// "HOST:PORT" or "[IPv6]:PORT".
absl::StatusOr<HostPort> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  HostPort out;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve HTTP on \"", listen.substr(0, 200),
                     "\": give HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080)"));
  }
  out.host = listen.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' &&
      out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  return out;
}

HttpRequest ToRequest(const httplib::Request& req, bool https,
                      std::string body) {
  HttpRequest out;
  out.method = req.method;
  out.path = req.path;
  const size_t q = req.target.find('?');
  if (q != std::string::npos) out.query = req.target.substr(q + 1);
  out.body = std::move(body);
  out.authorization = req.get_header_value("Authorization");
  out.content_type = req.get_header_value("Content-Type");
  const bool v6 = req.remote_addr.find(':') != std::string::npos;
  out.peer = v6 ? absl::StrCat("ipv6:[", req.remote_addr, "]:", req.remote_port)
                : absl::StrCat("ipv4:", req.remote_addr, ":", req.remote_port);
  out.host = req.get_header_value("Host");
  out.headers.assign(req.headers.begin(), req.headers.end());
  out.https = https;
  return out;
}

// The body goes out as a content provider of known length: cpp-httplib
// then never compresses it (with set_content it brotli-compresses text and
// JSON at quality 11 for browsers, which for a large page takes many times
// longer than sending it; cairnd serves loopback and LANs, where
// compression costs more than it saves: docs/benchmarks.md, "Web UI").
void Send(HttpResponse response, httplib::Response& res) {
  res.status = response.status;
  res.set_header("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : response.headers) {
    res.set_header(name, value);
  }
  auto body = std::make_shared<std::string>(std::move(response.body));
  res.set_content_provider(
      body->size(), response.content_type,
      [body](size_t offset, size_t length, httplib::DataSink& sink) {
        return sink.write(body->data() + offset, length);
      });
}

// Words the errors the library answers by itself (413 for a body over
// `limit` bytes, 400 for a bad request) as the REST API's error JSON.
auto LibraryErrorHandler(size_t limit) {
  return [limit](const httplib::Request&, httplib::Response& res) {
    // Only the library's own errors: Send marks every response of ours.
    if (res.has_header("X-Content-Type-Options")) return;
    res.set_header("X-Content-Type-Options", "nosniff");
    if (res.status == 413) {
      res.set_content(
          ErrorJson(413, "RESOURCE_EXHAUSTED",
                    absl::StrCat("request body larger than ", limit, " bytes")),
          "application/json");
    } else {
      res.set_content(
          ErrorJson(res.status, "INVALID_ARGUMENT",
                    absl::StrCat("bad HTTP request (status ", res.status, ")")),
          "application/json");
    }
  };
}

// Reads the body of `req` itself rather than by the library, which refuses
// a body over 8 KB sent as application/x-www-form-urlencoded (curl -d's
// default) with a 413, and reads a chunked body (no Content-Length)
// without any bound. True with the body in `body`; false when the request
// is answered already or left: a multipart body gets 415, and over `limit`
// bytes a 413, worded by the error handler, and the connection is closed
// (the rest is left unread).
bool ReadBody(const httplib::Request& req, httplib::Response& res,
              const httplib::ContentReader& reader, size_t limit,
              std::string* body) {
  bool too_large = false;
  if (req.is_multipart_form_data()) {
    if (reader([](const httplib::MultipartFormData&) { return true; },
               [](const char*, size_t) { return true; })) {
      HttpResponse refused;
      refused.status = 415;
      refused.body = ErrorJson(415, "INVALID_ARGUMENT",
                               "multipart bodies are not accepted: send "
                               "the request's JSON as the body");
      Send(std::move(refused), res);
    }
    return false;
  }
  if (!reader([&](const char* data, size_t n) {
        too_large = body->size() + n > limit;
        if (!too_large) body->append(data, n);
        return !too_large;
      })) {
    if (too_large) {
      res.status = 413;
      res.set_header("Connection", "close");
    }
    return false;
  }
  return true;
}

// Every path and method goes to the one handler; POST, PUT, PATCH and
// DELETE with or without a body.
template <typename Serve, typename ServeBody>
void Route(httplib::Server& server, const Serve& serve,
           const ServeBody& serve_body) {
  server.Get(".*", serve);
  server.Post(".*", serve);
  server.Post(".*", serve_body);
  server.Put(".*", serve);
  server.Put(".*", serve_body);
  server.Patch(".*", serve);
  server.Patch(".*", serve_body);
  server.Delete(".*", serve);
  server.Delete(".*", serve_body);
  server.Options(".*", serve);
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

absl::Status HttpServer::Create() {
  if (options_.tls.enabled()) {
    certificate_ = std::make_unique<ServerCertificate>(options_.tls);
    absl::Status setup;
    server_ = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
      setup = certificate_->SetUp(&ctx);
      return setup.ok();
    });
    if (!setup.ok()) return setup;
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  if (!server_->is_valid()) {
    return absl::InternalError("the HTTP server could not be created");
  }
  const size_t threads = static_cast<size_t>(options_.threads);
  server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server_->set_socket_options(ReuseAddressOnly);
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_read_timeout(30, 0);
  // A response goes out as headers then body: without TCP_NODELAY the
  // body waits for the client's delayed ACK, ~40 ms per keep-alive call.
  server_->set_tcp_nodelay(true);
  const size_t limit = options_.max_body_bytes;
  server_->set_error_handler(LibraryErrorHandler(limit));
  // Requests without a body.
  auto serve = [this](const httplib::Request& req, httplib::Response& res) {
    Send(handler_(ToRequest(req, tls(), "")), res);
  };
  auto serve_body = [this, limit](const httplib::Request& req,
                                  httplib::Response& res,
                                  const httplib::ContentReader& reader) {
    std::string body;
    if (!ReadBody(req, res, reader, limit, &body)) return;
    Send(handler_(ToRequest(req, tls(), std::move(body))), res);
  };
  Route(*server_, serve, serve_body);
  return absl::OkStatus();
}

absl::Status HttpServer::Bind() {
  absl::StatusOr<HostPort> at = ParseListen(options_.listen);
  if (!at.ok()) return at.status();
  bool bound;
  if (at->port == 0) {
    port_ = server_->bind_to_any_port(at->host);
    bound = port_ > 0;
  } else {
    port_ = at->port;
    bound = server_->bind_to_port(at->host, at->port);
  }
  if (!bound) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve HTTP on \"", options_.listen.substr(0, 200),
        "\": the address is in use or not a local numeric address"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpServerOptions& options, HttpHandler handler) {
  std::unique_ptr<HttpServer> server(
      new HttpServer(options, std::move(handler)));
  if (absl::Status s = server->Create(); !s.ok()) return s;
  if (absl::Status s = server->Bind(); !s.ok()) return s;
  httplib::Server* http = server->server_.get();
  server->thread_ = std::thread([http] { http->listen_after_bind(); });
  return server;
}

HttpServer::~HttpServer() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace cairn::http
