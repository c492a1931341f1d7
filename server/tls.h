// cairnd's TLS: the files it serves with and the gRPC server credentials
// made from them, reloaded when the files change (rotation without restart).
#ifndef CAIRN_SERVER_TLS_H_
#define CAIRN_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace cairn {

struct ServerTlsOptions {
  // PEM certificate chain and private key cairnd presents (--tls-cert,
  // --tls-key).
  std::string cert_file;
  std::string key_file;
  // PEM CA certificates (--tls-client-ca): when set, every client must
  // present a certificate that chains to one of them (mTLS).
  std::string client_ca_file;
  // How often (seconds, at least 1) the files are checked for changes.
  int refresh_seconds = 60;

  // Whether any TLS flag is set (CheckServerTlsFiles then needs them all
  // to fit together).
  bool enabled() const {
    return !cert_file.empty() || !key_file.empty() || !client_ca_file.empty();
  }
};

// OK when `options` can serve: cert and key both given, each file readable
// PEM, the key matching the certificate, the client CA (if any) holding at
// least one certificate. Otherwise InvalidArgument naming the flag and the
// file. Checked once at start only: while rotated files do not load (a
// key that does not fit, a damaged file), gRPC fails new handshakes and
// logs why, until the files are fixed.
absl::Status CheckServerTlsFiles(const ServerTlsOptions& options);

// TLS server credentials over the files of `options` (which must pass
// CheckServerTlsFiles), re-read every refresh_seconds when they change:
// new connections get the new certificate, open ones keep theirs. Replace
// cert and key together (write both, then rename each into place, or swap a
// directory symlink). With client_ca_file, clients without a certificate
// signed by it fail the handshake.
std::shared_ptr<grpc::ServerCredentials> NewServerTlsCredentials(
    const ServerTlsOptions& options);

}  // namespace cairn

#endif  // CAIRN_SERVER_TLS_H_
