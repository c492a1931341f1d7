// See audit_log.h.
#include "audit/audit_log.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "auth/permissions.h"
#include "util/time_proto.h"

namespace cairn::audit {
namespace {

// gRPC status codes (google.rpc.Code).
constexpr int kPermissionDenied = 7;
constexpr int kUnauthenticated = 16;

void Truncate(std::string* text) {
  if (text->size() > kMaxAuditFieldChars) text->resize(kMaxAuditFieldChars);
}

std::string PageToken(int64_t id) { return absl::StrFormat("%016x", id); }

absl::StatusOr<int64_t> ParsePageToken(absl::string_view token) {
  uint64_t id = 0;
  if (token.size() == 16 && absl::SimpleHexAtoi(token, &id) && id > 0 &&
      id <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(id);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("page_token: '", token.substr(0, 64),
                   "' is not a next_page_token of ListAuditEvents"));
}

// The id List starts its scan at.
absl::StatusOr<int64_t> StartId(const AuditQuery& query, int64_t time_id) {
  int64_t start = query.start_time == absl::InfinitePast() ? 1 : time_id;
  if (!query.page_token.empty()) {
    absl::StatusOr<int64_t> token = ParsePageToken(query.page_token);
    if (!token.ok()) return token.status();
    start = std::max(start, *token);
  }
  return std::max<int64_t>(start, 1);
}

}  // namespace

int64_t AuditLog::IdAt(absl::Time time) {
  return std::max<int64_t>(absl::ToUnixMicros(time), 1);
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(
    AuditStore* store, AuditLogOptions options) {
  if (options.retention <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "audit retention: ", absl::FormatDuration(options.retention),
        " is not positive"));
  }
  absl::StatusOr<int64_t> last = store->LastAuditEventId();
  if (!last.ok()) return last.status();
  std::unique_ptr<AuditLog> log(new AuditLog(store, std::move(options), *last));
  if (absl::Status s = log->Purge(); !s.ok()) return s;
  return log;
}

bool AuditLog::ShouldRecord(absl::string_view full_method, int code) const {
  if (code == kUnauthenticated || code == kPermissionDenied) return true;
  const std::optional<auth::MethodRule> rule = auth::RuleFor(full_method);
  if (!rule.has_value()) return false;
  return ShouldRecordOperation(rule->changes_state, code);
}

bool AuditLog::ShouldRecordOperation(bool changes_state, int code) const {
  if (code == kUnauthenticated || code == kPermissionDenied) return true;
  return changes_state || options_.record_reads;
}

absl::Status AuditLog::Purge() {
  const absl::Time now = options_.now();
  {
    absl::MutexLock lock(&mu_);
    last_purge_ = now;
  }
  return store_->DeleteAuditEventsBefore(IdAt(now - options_.retention));
}

absl::Status AuditLog::Record(cairn::v1::AuditEvent event) {
  const absl::Time now = options_.now();
  int64_t id = 0;
  int64_t delete_before = 0;
  {
    absl::MutexLock lock(&mu_);
    id = std::max(IdAt(now), last_id_ + 1);
    last_id_ = id;
    if (now - last_purge_ >= options_.purge_interval) {
      last_purge_ = now;
      delete_before = IdAt(now - options_.retention);
    }
  }
  *event.mutable_time() = util::ToProtoTimestamp(now);
  Truncate(event.mutable_principal());
  Truncate(event.mutable_resource());
  Truncate(event.mutable_message());
  return store_->PutAuditEvent(id, event, delete_before);
}

absl::StatusOr<AuditPage> AuditLog::List(const AuditQuery& query) const {
  if (query.page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: ", query.page_size, " is negative (0 means ",
                     kDefaultPageSize, ")"));
  }
  const size_t page_size = static_cast<size_t>(
      query.page_size == 0 ? kDefaultPageSize
                           : std::min(query.page_size, kMaxPageSize));
  absl::StatusOr<int64_t> start = StartId(query, IdAt(query.start_time));
  if (!start.ok()) return start.status();
  AuditPage page;
  int scanned = 0;
  absl::Status s = store_->ScanAuditEvents(
      *start, [&](int64_t id, const cairn::v1::AuditEvent& event) {
        if (page.events.size() == page_size || scanned == kMaxScannedPerPage) {
          page.next_page_token = PageToken(id);
          return false;
        }
        ++scanned;
        if (!query.principal.empty() && event.principal() != query.principal) {
          return true;
        }
        if (util::FromProtoTimestamp(event.time()) < query.start_time)
          return true;
        page.events.push_back(event);
        return true;
      });
  if (!s.ok()) return s;
  return page;
}

}  // namespace cairn::audit
