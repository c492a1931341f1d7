// SHA-256 and HMAC-SHA256 (OpenSSL), raw and as lower-case hex: for SigV4
// signatures and keys derived from a server secret.
#ifndef CAIRN_UTIL_CRYPTO_HMAC_H_
#define CAIRN_UTIL_CRYPTO_HMAC_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cairn::util {

// The 32 raw bytes of HMAC-SHA256(key, data).
std::string HmacSha256(absl::string_view key, absl::string_view data);
// Lower-case hex of HMAC-SHA256(key, data) and of SHA-256(data).
std::string HmacSha256Hex(absl::string_view key, absl::string_view data);
std::string Sha256Hex(absl::string_view data);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_CRYPTO_HMAC_H_
