// See token.h.
#include "auth/token.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cairn::auth {
namespace {

constexpr size_t kSecretBytes = 32;
constexpr size_t kMaxNameLength = 64;

std::string Hex(const unsigned char* data, size_t size) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(data), size));
}

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

absl::StatusOr<std::string> GenerateTokenSecret() {
  unsigned char bytes[kSecretBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("OpenSSL RAND_bytes failed to make a token");
  }
  return absl::StrCat(kTokenSecretPrefix, Hex(bytes, sizeof(bytes)));
}

std::string TokenSha256(absl::string_view secret) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(secret.data()), secret.size(),
         digest);
  return Hex(digest, sizeof(digest));
}

absl::Status ValidateTokenName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength;
  for (char c : name) ok = ok && IsNameChar(c);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "name: '", absl::CHexEscape(name.substr(0, kMaxNameLength)),
      "' is not a token name (1 to 64 characters of A-Z a-z 0-9 . _ -)"));
}

}  // namespace cairn::auth
