// The text form of roles (cairn.v1.Role), one home for the server and every
// client: "viewer", "editor", "admin".
#ifndef CAIRN_API_ROLES_H_
#define CAIRN_API_ROLES_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/admin_service.pb.h"

namespace cairn::api {

// "viewer", "editor", "admin" ("unspecified" otherwise).
absl::string_view RoleName(cairn::v1::Role role);

// Parses "viewer", "editor" or "admin"; InvalidArgument naming `field` and
// at most the first 64 characters of `text`.
absl::StatusOr<cairn::v1::Role> ParseRole(absl::string_view field,
                                          absl::string_view text);

}  // namespace cairn::api

#endif  // CAIRN_API_ROLES_H_
