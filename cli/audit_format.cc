// See audit_format.h.
#include "cli/audit_format.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/roles.h"
#include "cli/format.h"
#include "google/protobuf/util/time_util.h"

namespace cairn::cli {
namespace {

// The role's name; "" for none (an unauthenticated call).
std::string RoleText(cairn::v1::Role role) {
  if (role == cairn::v1::ROLE_UNSPECIFIED) return "";
  return std::string(api::RoleName(role));
}

std::string CodeText(int code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

std::string OrDash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::string TableTime(const google::protobuf::Timestamp& t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

}  // namespace

nlohmann::ordered_json AuditEventToJson(const cairn::v1::AuditEvent& event) {
  nlohmann::ordered_json j;
  j["time"] = google::protobuf::util::TimeUtil::ToString(event.time());
  j["principal"] = event.principal();
  j["role"] = RoleText(event.role());
  j["method"] = event.method();
  j["resource"] = event.resource();
  j["code"] = CodeText(event.code());
  j["message"] = event.message();
  j["peer"] = event.peer();
  return j;
}

std::string AuditTable(const std::vector<cairn::v1::AuditEvent>& events) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(events.size());
  for (const cairn::v1::AuditEvent& e : events) {
    absl::string_view method = e.method();
    absl::ConsumePrefix(&method, "/cairn.v1.");
    rows.push_back({TableTime(e.time()), OrDash(e.principal()),
                    OrDash(RoleText(e.role())), std::string(method),
                    OrDash(e.resource()), CodeText(e.code()), e.peer()});
  }
  return FormatTable(
      {"TIME", "PRINCIPAL", "ROLE", "METHOD", "RESOURCE", "CODE", "PEER"},
      rows);
}

}  // namespace cairn::cli
