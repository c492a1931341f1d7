// The cairn audit subcommand: list (AdminService.ListAuditEvents, every
// page).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/audit_format.h"
#include "cli/client.h"
#include "cli/handlers.h"
#include "util/flags/durations.h"

namespace cairn::cli {
namespace {

namespace v1 = cairn::v1;

// The request of `cairn audit list`'s first page.
absl::StatusOr<v1::ListAuditEventsRequest> AuditRequest(const Options& opt) {
  v1::ListAuditEventsRequest request;
  request.set_principal(opt.audit_principal);
  request.set_page_size(1000);
  if (!opt.audit_since.empty()) {
    absl::StatusOr<absl::Duration> since =
        util::flags::ParseFlagDuration("--since", opt.audit_since);
    if (!since.ok()) return since.status();
    const absl::Time start = absl::Now() - *since;
    request.mutable_start_time()->set_seconds(absl::ToUnixSeconds(start));
  }
  return request;
}

}  // namespace

absl::Status AuditList(Context& c) {
  absl::StatusOr<v1::ListAuditEventsRequest> request = AuditRequest(c.opt);
  if (!request.ok()) return request.status();
  std::vector<v1::AuditEvent> events;
  do {
    auto page =
        c.Client().Call(&StudyClient::AdminStub::ListAuditEvents, *request);
    if (!page.ok()) return page.status();
    for (const v1::AuditEvent& e : page->events()) {
      if (c.opt.json) {
        *c.out << AuditEventToJson(e).dump() << "\n";
      } else {
        events.push_back(e);
      }
    }
    request->set_page_token(page->next_page_token());
  } while (!request->page_token().empty());
  if (!c.opt.json) *c.out << AuditTable(events);
  return absl::OkStatus();
}

}  // namespace cairn::cli
