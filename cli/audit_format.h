// How `cairn audit list` prints audit events: one JSON object per line for
// scripts, an aligned table for people. Pure functions.
#ifndef CAIRN_CLI_AUDIT_FORMAT_H_
#define CAIRN_CLI_AUDIT_FORMAT_H_

#include <string>
#include <vector>

#include "cairn/v1/admin_service.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::cli {

// {"time": RFC 3339 UTC, "principal": "" when unauthenticated, "role":
// "viewer"/"editor"/"admin"/"", "method": the full method name,
// "resource", "code": "OK"/"PERMISSION_DENIED"/..., "message", "peer"}.
nlohmann::ordered_json AuditEventToJson(const cairn::v1::AuditEvent& event);

// TIME (UTC, seconds), PRINCIPAL ("-" when none), ROLE, METHOD (without
// "/cairn.v1."), RESOURCE ("-" when none), CODE, PEER.
std::string AuditTable(const std::vector<cairn::v1::AuditEvent>& events);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_AUDIT_FORMAT_H_
