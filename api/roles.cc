// Roles as text: see roles.h.
#include "api/roles.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cairn::api {

absl::string_view RoleName(cairn::v1::Role role) {
  switch (role) {
    case cairn::v1::VIEWER:
      return "viewer";
    case cairn::v1::EDITOR:
      return "editor";
    case cairn::v1::ADMIN:
      return "admin";
    default:
      return "unspecified";
  }
}

absl::StatusOr<cairn::v1::Role> ParseRole(absl::string_view field,
                                          absl::string_view text) {
  for (cairn::v1::Role role :
       {cairn::v1::VIEWER, cairn::v1::EDITOR, cairn::v1::ADMIN}) {
    if (text == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", absl::CHexEscape(text.substr(0, 64)),
                   "' is not a role (viewer, editor or admin)"));
}

}  // namespace cairn::api
