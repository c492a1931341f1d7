// Which listen addresses cairnd may serve on, given how it authenticates
// callers and protects the transport: the one home of the loopback rule.
#ifndef CAIRN_SERVER_LISTEN_POLICY_H_
#define CAIRN_SERVER_LISTEN_POLICY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cairn {

// Whether the host of `listen` (HOST:PORT) is a loopback address:
// 127.0.0.0/8, [::1] or localhost. Anything else (0.0.0.0, [::], a name, an
// interface address) is reachable from the network.
bool IsLoopbackListen(const std::string& listen);

struct ListenSecurity {
  std::string listen;
  // Tokens checked (false: --auth=none).
  bool auth = true;
  // TLS served (--tls-cert and --tls-key given).
  bool tls = false;
  // --insecure: plaintext on a non-loopback address, on purpose.
  bool insecure = false;
};

// OK when `s` may serve; otherwise InvalidArgument naming the flags:
// --auth=none with a non-loopback --listen (always refused), or a
// non-loopback --listen without TLS and without --insecure (names
// --tls-cert and --insecure).
absl::Status CheckListenSecurity(const ListenSecurity& s);

// Whether cairnd serves plaintext beyond loopback on purpose (--insecure
// with a non-loopback --listen and no TLS): it then warns at every start.
bool ServesPlaintextOnNetwork(const ListenSecurity& s);

// The address training jobs reach cairnd at (their CAIRN_SERVER), from
// --job-server: "" gives 127.0.0.1:`jobs_port` (the port cairnd keeps for
// jobs); HOST:PORT is used as given; HOST alone (a name, an IPv4 address,
// or an IPv6 one with or without brackets) gets `grpc_port`.
// InvalidArgument naming --job-server and the value when it is not one of
// these (a bad port, spaces, a scheme).
absl::StatusOr<std::string> JobServerAddress(const std::string& job_server,
                                             int grpc_port, int jobs_port);

}  // namespace cairn

#endif  // CAIRN_SERVER_LISTEN_POLICY_H_
