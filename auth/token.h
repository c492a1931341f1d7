// Token secrets: generation, hashing and names. The store keeps only
// TokenSha256(secret), never a secret.
#ifndef CAIRN_AUTH_TOKEN_H_
#define CAIRN_AUTH_TOKEN_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::auth {

// Every secret starts with this (so that it is recognisable in a leak scan).
inline constexpr absl::string_view kTokenSecretPrefix = "cairn_";

// A new secret: kTokenSecretPrefix and 64 lower-case hex digits of 32 bytes
// from OpenSSL's RAND_bytes. Internal error if the generator fails.
absl::StatusOr<std::string> GenerateTokenSecret();

// Lower-case hex SHA-256 of `secret` (64 characters).
std::string TokenSha256(absl::string_view secret);

// OK if `name` is 1 to 64 characters of [A-Za-z0-9._-]; otherwise
// InvalidArgument naming the field and (the start of) the value.
absl::Status ValidateTokenName(absl::string_view name);

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_TOKEN_H_
