// See tls.h. Reloading is gRPC's FileWatcherCertificateProvider (experimental
// in gRPC 1.51, Debian's), which polls the files' contents.
#include "server/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace cairn {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

absl::Status Bad(const char* flag, const std::string& path,
                 absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": '", path.substr(0, 256), "' ", what));
}

// The first certificate of the PEM file `path`.
absl::StatusOr<std::unique_ptr<X509, X509Free>> ReadCert(
    const std::string& path, const char* flag) {
  Bio bio(BIO_new_file(path.c_str(), "r"));
  if (bio == nullptr) return Bad(flag, path, "cannot be read");
  std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) return Bad(flag, path, "holds no PEM certificate");
  return cert;
}

}  // namespace

absl::Status CheckServerTlsFiles(const ServerTlsOptions& options) {
  if (options.cert_file.empty() || options.key_file.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TLS needs both --tls-cert and --tls-key, but ",
        options.cert_file.empty() ? "--tls-cert" : "--tls-key", " is missing"));
  }
  absl::StatusOr<std::unique_ptr<X509, X509Free>> cert =
      ReadCert(options.cert_file, "--tls-cert");
  if (!cert.ok()) return cert.status();
  Bio bio(BIO_new_file(options.key_file.c_str(), "r"));
  if (bio == nullptr)
    return Bad("--tls-key", options.key_file, "cannot be read");
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return Bad("--tls-key", options.key_file,
               "holds no unencrypted PEM private key");
  }
  if (X509_check_private_key(cert->get(), key.get()) != 1) {
    return Bad("--tls-key", options.key_file,
               absl::StrCat("does not match the certificate in --tls-cert '",
                            options.cert_file.substr(0, 256), "'"));
  }
  if (!options.client_ca_file.empty()) {
    absl::StatusOr<std::unique_ptr<X509, X509Free>> ca =
        ReadCert(options.client_ca_file, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> NewServerTlsCredentials(
    const ServerTlsOptions& options) {
  const unsigned int refresh =
      static_cast<unsigned int>(std::max(1, options.refresh_seconds));
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          options.key_file, options.cert_file, options.client_ca_file, refresh);
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (options.client_ca_file.empty()) {
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    tls.watch_root_certs();
    tls.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(tls);
}

}  // namespace cairn
