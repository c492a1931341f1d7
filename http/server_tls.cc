// See server_tls.h.
#include "http/server_tls.h"

#include <sys/stat.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "openssl/err.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace cairn::http {

struct ServerCertificate::Pair {
  ~Pair() {
    X509_free(cert);
    if (chain != nullptr) sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(ca_store);
    if (ca_names != nullptr) sk_X509_NAME_pop_free(ca_names, X509_NAME_free);
  }
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  X509_STORE* ca_store = nullptr;  // The client CA's; null without one.
  STACK_OF(X509_NAME) * ca_names = nullptr;
  struct timespec cert_mtime = {}, key_mtime = {}, ca_mtime = {};
};

namespace {

bool Mtime(const std::string& path, struct timespec* out) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  *out = st.st_mtim;
  return true;
}

bool Same(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

absl::Status Bad(const std::string& path, const char* what) {
  ERR_clear_error();
  return absl::InvalidArgumentError(absl::StrCat("HTTPS: ", path, ": ", what));
}

}  // namespace

ServerCertificate::ServerCertificate(ServerTlsFiles files)
    : files_(std::move(files)) {}

ServerCertificate::~ServerCertificate() = default;

absl::Status ServerCertificate::ReadPair(const std::string& cert,
                                         const std::string& key, Pair* out) {
  FILE* f = std::fopen(cert.c_str(), "r");
  if (f == nullptr) return Bad(cert, "cannot be read");
  out->cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  out->chain = sk_X509_new_null();
  while (X509* extra = PEM_read_X509(f, nullptr, nullptr, nullptr)) {
    sk_X509_push(out->chain, extra);
  }
  std::fclose(f);
  if (out->cert == nullptr) return Bad(cert, "holds no PEM certificate");
  f = std::fopen(key.c_str(), "r");
  if (f == nullptr) return Bad(key, "cannot be read");
  out->key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (out->key == nullptr) return Bad(key, "holds no PEM private key");
  if (X509_check_private_key(out->cert, out->key) != 1) {
    return Bad(key, "does not match the certificate");
  }
  ERR_clear_error();
  return absl::OkStatus();
}

absl::Status ServerCertificate::ReadClientCa(const std::string& path,
                                             Pair* out) {
  out->ca_store = X509_STORE_new();
  if (out->ca_store == nullptr ||
      X509_STORE_load_locations(out->ca_store, path.c_str(), nullptr) != 1) {
    return Bad(path, "holds no PEM CA certificate");
  }
  out->ca_names = SSL_load_client_CA_file(path.c_str());
  if (out->ca_names == nullptr) return Bad(path, "holds no PEM CA certificate");
  ERR_clear_error();
  return absl::OkStatus();
}

absl::Status ServerCertificate::Refresh() {
  struct timespec cert_mtime, key_mtime, ca_mtime = {};
  if (!Mtime(files_.cert, &cert_mtime)) return Bad(files_.cert, "is missing");
  if (!Mtime(files_.key, &key_mtime)) return Bad(files_.key, "is missing");
  const bool mtls = !files_.client_ca.empty();
  if (mtls && !Mtime(files_.client_ca, &ca_mtime)) {
    return Bad(files_.client_ca, "is missing");
  }
  {
    absl::MutexLock lock(&mu_);
    if (current_ != nullptr && Same(current_->cert_mtime, cert_mtime) &&
        Same(current_->key_mtime, key_mtime) &&
        Same(current_->ca_mtime, ca_mtime)) {
      return absl::OkStatus();
    }
  }
  auto next = std::make_unique<Pair>();
  next->cert_mtime = cert_mtime;
  next->key_mtime = key_mtime;
  next->ca_mtime = ca_mtime;
  if (absl::Status s = ReadPair(files_.cert, files_.key, next.get()); !s.ok()) {
    return s;
  }
  if (mtls) {
    if (absl::Status s = ReadClientCa(files_.client_ca, next.get()); !s.ok()) {
      return s;
    }
  }
  absl::MutexLock lock(&mu_);
  current_ = std::move(next);
  ++loads_;
  return absl::OkStatus();
}

int ServerCertificate::loads() const {
  absl::MutexLock lock(&mu_);
  return loads_;
}

int ServerCertificate::OnHandshake(SSL* ssl, void* arg) {
  auto* self = static_cast<ServerCertificate*>(arg);
  (void)self->Refresh();  // On error the last good files stay.
  absl::MutexLock lock(&self->mu_);
  if (self->current_ != nullptr) {
    // Takes its own references.
    SSL_use_cert_and_key(ssl, self->current_->cert, self->current_->key,
                         self->current_->chain, 1);
    if (self->current_->ca_store != nullptr) {
      // Runs before the client's certificate is asked for and verified.
      SSL_set1_verify_cert_store(ssl, self->current_->ca_store);
      SSL_set_client_CA_list(ssl, SSL_dup_CA_list(self->current_->ca_names));
    }
  }
  ERR_clear_error();
  return 1;
}

absl::Status ServerCertificate::SetUp(SSL_CTX* ctx) {
  if (absl::Status s = Refresh(); !s.ok()) return s;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION |
                               SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  {
    absl::MutexLock lock(&mu_);
    if (SSL_CTX_use_cert_and_key(ctx, current_->cert, current_->key,
                                 current_->chain, 1) != 1) {
      return Bad(files_.cert, "cannot be used as a server certificate");
    }
  }
  SSL_CTX_set_cert_cb(ctx, &ServerCertificate::OnHandshake, this);
  if (!files_.client_ca.empty()) {
    // The CA itself is given to each handshake by OnHandshake. No session
    // resumption: every connection's client certificate is verified
    // against the current CA.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  ERR_clear_error();
  return absl::OkStatus();
}

}  // namespace cairn::http
