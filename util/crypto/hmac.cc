// See hmac.h.
#include "util/crypto/hmac.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "absl/strings/escaping.h"

namespace cairn::util {

std::string HmacSha256(absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
       &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string HmacSha256Hex(absl::string_view key, absl::string_view data) {
  return absl::BytesToHexString(HmacSha256(key, data));
}

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

}  // namespace cairn::util
