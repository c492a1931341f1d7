// HTTPS for cairnd's HTTP port with the files of --tls-cert, --tls-key and
// --tls-client-ca, as gRPC serves them: TLS 1.2 or later; with a client CA,
// a client certificate it signed is required (mTLS); the certificate, key
// and client CA are read again at the first handshake after any of their
// files changed (rotation without restart; files that do not load, or a
// pair that does not match, are ignored and the last good ones kept).
#ifndef CAIRN_HTTP_SERVER_TLS_H_
#define CAIRN_HTTP_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "openssl/ssl.h"

namespace cairn::http {

struct ServerTlsFiles {
  std::string cert;       // PEM: the certificate, then its chain.
  std::string key;        // PEM private key.
  std::string client_ca;  // PEM CA certificates; "" accepts any client.
  bool enabled() const { return !cert.empty(); }
};

// The current certificate and key of a TLS server, from their files.
// Thread-safe.
class ServerCertificate {
 public:
  explicit ServerCertificate(ServerTlsFiles files);
  ~ServerCertificate();
  ServerCertificate(const ServerCertificate&) = delete;
  ServerCertificate& operator=(const ServerCertificate&) = delete;

  // Sets up `ctx` for serving: versions, the certificate and client CA
  // (loaded now; InvalidArgument naming the file when one cannot be used),
  // and a callback that gives every handshake the current ones.
  // This object must outlive `ctx`.
  absl::Status SetUp(SSL_CTX* ctx);

  // How many times the files were (re)loaded successfully.
  int loads() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pair;
  // Reloads when a file's modification time changed. InvalidArgument
  // naming the file when the new files do not load.
  absl::Status Refresh() ABSL_LOCKS_EXCLUDED(mu_);
  // Reads the certificate (then its chain) at `cert` and the key at `key`.
  static absl::Status ReadPair(const std::string& cert, const std::string& key,
                               Pair* out);
  // Reads the client CA certificates at `path` into out->ca_store and
  // out->ca_names.
  static absl::Status ReadClientCa(const std::string& path, Pair* out);
  // SSL_CTX_set_cert_cb's callback: 1 (go on) always.
  static int OnHandshake(SSL* ssl, void* self);

  const ServerTlsFiles files_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Pair> current_ ABSL_GUARDED_BY(mu_);
  int loads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_SERVER_TLS_H_
