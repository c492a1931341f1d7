// See client_tls.h.
#include "auth/client_tls.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "util/bounded_file.h"

namespace cairn::auth {
namespace {

// `field` unless empty, else the value of `env` ("" when unset).
std::string OrEnv(std::string field, const char* env) {
  if (!field.empty()) return field;
  const char* value = std::getenv(env);
  return value != nullptr ? value : "";
}

// Certificate chains and keys are kilobytes; more is no PEM file (and the
// file may be endless: /dev/zero).
constexpr size_t kMaxPemBytes = 1 << 20;

// The whole of `path`; InvalidArgument naming `flag` if it cannot be read,
// is empty or is over kMaxPemBytes.
absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  absl::StatusOr<std::string> text = util::ReadFileAtMost(path, kMaxPemBytes);
  if (text.ok() && text->empty()) {
    text = absl::InvalidArgumentError(
        absl::StrCat("'", path.substr(0, 256), "' is empty"));
  }
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": cannot read a PEM file: ", text.status().message()));
  }
  return text;
}

}  // namespace

ClientTlsFiles ClientTlsFilesFromEnv(ClientTlsFiles flags) {
  flags.ca = OrEnv(std::move(flags.ca), "CAIRN_TLS_CA");
  flags.cert = OrEnv(std::move(flags.cert), "CAIRN_TLS_CERT");
  flags.key = OrEnv(std::move(flags.key), "CAIRN_TLS_KEY");
  return flags;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
NewClientChannelCredentials(const ClientTlsFiles& files) {
  if (!files.enabled()) return grpc::InsecureChannelCredentials();
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        files.cert.empty() ? "--tls-key needs --tls-cert (the certificate of "
                             "the client key)"
                           : "--tls-cert needs --tls-key (the client "
                             "certificate's private key)");
  }
  grpc::SslCredentialsOptions options;
  if (!files.ca.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(files.ca, "--tls-ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
  }
  if (!files.cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPem(files.cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem(files.key, "--tls-key");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(options);
}

}  // namespace cairn::auth
