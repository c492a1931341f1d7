// Which address a call came from, for the audit log. REST calls reach
// cairnd's gRPC service through an in-process channel (the REST layer calls
// the same service as everyone else); the HTTP client's address travels in
// the metadata kHttpPeerMetadata of those calls.
#ifndef CAIRN_AUDIT_CALL_PEER_H_
#define CAIRN_AUDIT_CALL_PEER_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cairn::audit {

inline constexpr char kHttpPeerMetadata[] = "x-cairn-http-peer";

// The peer to record for a call whose gRPC peer is `grpc_peer` and whose
// kHttpPeerMetadata is `http_peer` ("" when absent): for calls through the
// in-process channel, which only cairnd itself opens, the HTTP client's
// address followed by " (REST)"; `grpc_peer` otherwise, so a client on the
// network cannot choose what is recorded.
std::string CallPeer(absl::string_view grpc_peer, absl::string_view http_peer);

}  // namespace cairn::audit

#endif  // CAIRN_AUDIT_CALL_PEER_H_
