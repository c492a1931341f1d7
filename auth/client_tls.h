// The client side of TLS, for the CLI and every C++ client: which files a
// client trusts and presents, and the channel credentials made from them.
#ifndef CAIRN_AUTH_CLIENT_TLS_H_
#define CAIRN_AUTH_CLIENT_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"

namespace cairn::auth {

// PEM files of a TLS client (all optional).
struct ClientTlsFiles {
  // CA certificates that cairnd's certificate must chain to (--tls-ca);
  // empty: the system's roots.
  std::string ca;
  // The client's certificate chain and private key, presented to a cairnd
  // that requires client certificates (--tls-cert, --tls-key; mTLS).
  std::string cert;
  std::string key;

  // Whether the client speaks TLS: when any file is named.
  bool enabled() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// `flags` with each empty field taken from $CAIRN_TLS_CA, $CAIRN_TLS_CERT or
// $CAIRN_TLS_KEY (flags win over the environment).
ClientTlsFiles ClientTlsFilesFromEnv(ClientTlsFiles flags);

// Insecure (plaintext) credentials when !files.enabled(); else TLS ones that
// verify cairnd's certificate against `ca` (and its name against the
// target's host) and present cert+key if given. InvalidArgument naming the
// flag if a file cannot be read or is empty, or if only one of cert and key
// is given.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
NewClientChannelCredentials(const ClientTlsFiles& files);

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_CLIENT_TLS_H_
