// See authorizer.h.
#include "auth/authorizer.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "auth/permissions.h"

namespace cairn::auth {
namespace {

constexpr absl::string_view kBearer = "Bearer ";

absl::Status Denied(const Principal& p, absl::string_view method,
                    Permission permission) {
  return absl::PermissionDeniedError(
      absl::StrCat("token '", p.name, "' (role ", api::RoleName(p.role),
                   ") lacks permission ", PermissionName(permission),
                   " needed by ", method));
}

// The rule for a job token: only its trial, only the methods marked.
// `resource` nullptr: a stream whose messages the caller checks one by one.
absl::Status CheckJobScope(const Principal& p, const MethodRule& rule,
                           absl::string_view method,
                           const absl::string_view* resource) {
  if (!rule.trial_job) {
    return absl::PermissionDeniedError(absl::StrCat(
        "token '", p.name, "' (a training job's) lacks permission ",
        PermissionName(rule.permission), " needed by ", method,
        ": it may only report on its trial"));
  }
  if (resource != nullptr && *resource != p.trial) {
    return absl::PermissionDeniedError(absl::StrCat(
        "token '", p.name, "' (a training job's) lacks permission ",
        PermissionName(rule.permission), " on '", resource->substr(0, 128),
        "': it may only act on ", p.trial));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Principal> Authorizer::Authorize(
    absl::string_view authorization, absl::string_view full_method,
    absl::string_view resource) const {
  return Check(authorization, full_method, &resource);
}

absl::StatusOr<Principal> Authorizer::AuthorizeStream(
    absl::string_view authorization, absl::string_view full_method) const {
  return Check(authorization, full_method, nullptr);
}

absl::StatusOr<Principal> Authorizer::Check(
    absl::string_view authorization, absl::string_view full_method,
    const absl::string_view* resource) const {
  const std::optional<MethodRule> rule = RuleFor(full_method);
  if (!rule.has_value()) {
    return absl::PermissionDeniedError(
        absl::StrCat("method ", full_method.substr(0, 128),
                     " is in no permission table: refused"));
  }
  if (registry_ == nullptr) {
    return Principal{std::string(kLocalPrincipal), cairn::v1::ADMIN, ""};
  }
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "missing 'authorization: Bearer <token>' metadata (cairn reads the "
        "token from $CAIRN_TOKEN, $CAIRN_TOKEN_FILE, --token-file or "
        "~/.config/cairn/token)");
  }
  absl::string_view secret = authorization;
  if (!absl::ConsumePrefix(&secret, kBearer) || secret.empty()) {
    return absl::UnauthenticatedError(
        "malformed authorization metadata: expected 'Bearer <token>'");
  }
  absl::StatusOr<Principal> principal =
      registry_->Authenticate(std::string(secret), now_());
  if (!principal.ok()) return principal.status();
  if (!principal->trial.empty()) {
    if (absl::Status s =
            CheckJobScope(*principal, *rule, full_method, resource);
        !s.ok()) {
      return s;
    }
  }
  if (!RoleAllows(principal->role, rule->permission)) {
    return Denied(*principal, full_method, rule->permission);
  }
  return principal;
}

std::optional<Principal> Authorizer::Identify(
    absl::string_view authorization) const {
  if (registry_ == nullptr) {
    return Principal{std::string(kLocalPrincipal), cairn::v1::ADMIN, ""};
  }
  absl::string_view secret = authorization;
  if (!absl::ConsumePrefix(&secret, kBearer) || secret.empty()) {
    return std::nullopt;
  }
  return registry_->Identify(std::string(secret));
}

absl::Status CheckMayDelete(const Principal& caller, absl::string_view what,
                            absl::string_view creator) {
  if (caller.role == cairn::v1::ADMIN) return absl::OkStatus();
  if (caller.trial.empty() && caller.name == creator) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "token '", caller.name, "' (role ", api::RoleName(caller.role),
      ") lacks permission admin needed to delete ", what.substr(0, 128),
      ": its study was created by '", creator,
      "' (an editor may delete only what it created)"));
}

}  // namespace cairn::auth
