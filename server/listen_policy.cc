// See listen_policy.h.
#include "server/listen_policy.h"

#include "absl/strings/match.h"
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

}  // namespace cairn
