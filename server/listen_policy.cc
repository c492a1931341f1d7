// See listen_policy.h.
#include "server/listen_policy.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cairn {

bool IsLoopbackListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const absl::string_view host = absl::string_view(listen).substr(
      0, colon == std::string::npos ? listen.size() : colon);
  return host == "localhost" || host == "[::1]" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

absl::Status CheckListenSecurity(const ListenSecurity& s) {
  if (IsLoopbackListen(s.listen)) return absl::OkStatus();
  const std::string listen = s.listen.substr(0, 128);
  if (!s.auth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--auth=none is for a single user on loopback only, but --listen is "
        "'",
        listen, "': listen on 127.0.0.1 or drop --auth=none and use tokens"));
  }
  if (!s.tls && !s.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen '", listen,
        "' is reachable from the network, where tokens would travel in "
        "plaintext: serve TLS with --tls-cert FILE --tls-key FILE, or pass "
        "--insecure to serve plaintext anyway"));
  }
  return absl::OkStatus();
}

bool ServesPlaintextOnNetwork(const ListenSecurity& s) {
  return !s.tls && !IsLoopbackListen(s.listen);
}

absl::StatusOr<std::string> JobServerAddress(const std::string& job_server,
                                             int grpc_port, int jobs_port) {
  if (job_server.empty()) return absl::StrCat("127.0.0.1:", jobs_port);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--job-server: '", job_server.substr(0, 128), "' ", why,
                     " (want HOST or HOST:PORT, e.g. cairnd.example.org or "
                     "10.0.0.5:50051)"));
  };
  const bool odd_char = std::any_of(
      job_server.begin(), job_server.end(),
      [](char c) { return c <= ' ' || c == '/' || c == '@' || c > '~'; });
  if (odd_char || job_server.size() > 255) return bad("is not an address");
  const size_t colons = std::count(job_server.begin(), job_server.end(), ':');
  const bool bracketed = job_server.front() == '[';
  const size_t close = job_server.find(']');
  if (bracketed && close == std::string::npos) return bad("lacks its ']'");
  // An IPv6 host without brackets, or a bracketed host without a port.
  if ((!bracketed && colons > 1) ||
      (bracketed && close + 1 == job_server.size())) {
    const std::string host =
        bracketed ? job_server : absl::StrCat("[", job_server, "]");
    return absl::StrCat(host, ":", grpc_port);
  }
  if (colons == 0) return absl::StrCat(job_server, ":", grpc_port);
  const size_t colon = job_server.rfind(':');
  int port = 0;
  if (colon == 0 || (bracketed && colon != close + 1) ||
      !absl::SimpleAtoi(job_server.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return bad("has no valid port");
  }
  return job_server;
}

}  // namespace cairn
