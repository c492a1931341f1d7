// The one table of what each RPC needs: method -> permission, and which
// roles hold which permission. Every StudyService and AdminService RPC is
// listed (tests/auth/permissions_test.cc fails when one is missing); a
// method that is not listed is refused (fail closed).
#ifndef CAIRN_AUTH_PERMISSIONS_H_
#define CAIRN_AUTH_PERMISSIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/roles.h"  // api::RoleName, api::ParseRole.
#include "cairn/v1/admin_service.pb.h"

namespace cairn::auth {

enum class Permission {
  kRead,   // "studies.read": studies, trials, curves, logs. viewer and up.
  kWrite,  // "studies.write": create and change studies, trials, jobs.
           // editor and up.
  kAdmin,  // "admin": tokens, backups, the audit log, anyone's studies.
           // admin only.
};

struct MethodRule {
  Permission permission;
  // A training job's token (scoped to one trial) may call it, for that
  // trial only.
  bool trial_job = false;
  // The method changes state (every studies.write method, and the admin
  // methods that write): the audit log records every call of it
  // (audit/audit_log.h); other methods only when refused, or with
  // cairnd --audit-reads.
  bool changes_state = false;
};

// The rule for a full method name ("/cairn.v1.StudyService/GetStudy");
// nullopt for a method not in the table.
std::optional<MethodRule> RuleFor(absl::string_view full_method);

// Every full method name in the table (for tests).
std::vector<std::string> MethodsInTable();

// Whether `role` holds `permission`.
bool RoleAllows(cairn::v1::Role role, Permission permission);

// "studies.read", "studies.write", "admin".
absl::string_view PermissionName(Permission permission);
// api::RoleName and api::ParseRole: api/roles.h.

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_PERMISSIONS_H_
