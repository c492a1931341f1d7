// AWS access keys for Cairn tokens, so that boto3 can call cairnd's
// SageMaker endpoint: `cairn token create --aws` shows the pair of a token.
// SigV4 needs the secret itself on the server (HMAC, not a hash), so the
// pair is derived, never stored: HMAC-SHA256 under a 32-byte server key of
// the token's name and creation time. The key lives in its own file (mode
// 0600, <data-dir>/aws-keys.key), not in the store: a copy of the store or
// a backup reveals no AWS secret, and deleting the file revokes every pair
// at once. A token's revocation or expiry ends its pair (the caller checks
// the token returned by Find).
//
// Thread-safe (immutable after Open).
#ifndef CAIRN_AUTH_AWS_KEYS_H_
#define CAIRN_AUTH_AWS_KEYS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/admin_service.pb.h"

namespace cairn::auth {

struct AwsKeyPair {
  std::string access_key_id;      // "CAIRN" + 15 upper-case hex digits
  std::string secret_access_key;  // 40 characters of [A-Za-z0-9+/]
};

class AwsKeys {
 public:
  // Reads the server key from `path`, or creates it (mode 0600, 32 bytes
  // from RAND_bytes, hex) if absent. FailedPrecondition naming the path if
  // it cannot be read or written, or is group/other-readable.
  static absl::StatusOr<std::unique_ptr<AwsKeys>> Open(const std::string& path);

  // The pair of `token` (its name and create_time).
  AwsKeyPair For(const cairn::v1::Token& token) const;

  // The token among `tokens` whose pair has `access_key_id`, revoked or
  // expired ones included; nullopt if none.
  std::optional<cairn::v1::Token> Find(
      absl::string_view access_key_id,
      const std::vector<cairn::v1::Token>& tokens) const;

 private:
  explicit AwsKeys(std::string key) : key_(std::move(key)) {}
  const std::string key_;
};

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_AWS_KEYS_H_
