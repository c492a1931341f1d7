#include "audit/call_peer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cairn::audit {

std::string CallPeer(absl::string_view grpc_peer, absl::string_view http_peer) {
  // gRPC 1.51's in-process transport gives its calls no peer ("unknown");
  // network clients always have one ("ipv4:...", "ipv6:...", "unix:...").
  const bool in_process =
      grpc_peer == "unknown" || absl::StartsWith(grpc_peer, "inproc");
  if (http_peer.empty() || !in_process) {
    return std::string(grpc_peer);
  }
  return absl::StrCat(http_peer.substr(0, 64), " (REST)");
}

}  // namespace cairn::audit
