// AuditLog: who did what to cairnd, and what came of it. Every
// call that changes state and every refused call (UNAUTHENTICATED,
// PERMISSION_DENIED) becomes one cairn.v1.AuditEvent in the store (key
// a/<id>, store/store.h); with record_reads, every other call of the
// permission table too. server/audit_interceptor.h feeds it from gRPC.
//
// Durability: Record returns once the event is in the store's WAL (see
// AuditStore::PutAuditEvent), and cairnd sends a call's response only after
// that, so the log survives restarts and kill -9 of cairnd like every
// acknowledged write. Events are not fsynced one by one (that doubled a
// write call's latency): the store syncs its WAL at the next synced write
// or within about a second, so a power loss can take the events of the
// last second.
//
// Ids: microseconds since the Unix epoch of the event's time, raised by one
// where needed so that they are unique and increase in the order Record
// allocates them (also across restarts: Open starts after the largest id
// stored). So key order is time order, and id >= the event's time.
//
// Retention: events older than `retention` are deleted at Open and then at
// most once per `purge_interval`, by a range deletion carried in the batch
// of the event Record writes (no extra write or fsync).
//
// Thread-safe.
#ifndef CAIRN_AUDIT_AUDIT_LOG_H_
#define CAIRN_AUDIT_AUDIT_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cairn/v1/admin_service.pb.h"
#include "store/store.h"

namespace cairn::audit {

struct AuditLogOptions {
  // Events older than this are deleted. Must be > 0. Default: 90 days
  // (cairnd --audit-retention).
  absl::Duration retention = absl::Hours(24 * 90);
  // How often Record deletes the events that have expired. Default: 1 hour.
  absl::Duration purge_interval = absl::Hours(1);
  // Also record the calls that only read (cairnd --audit-reads).
  // Default: false.
  bool record_reads = false;
  // The current time (tests move it). Default: absl::Now.
  std::function<absl::Time()> now = absl::Now;
};

// What List returns.
struct AuditQuery {
  // Only events at or after this time.
  absl::Time start_time = absl::InfinitePast();
  // Only events of this principal (exact match); "": every principal.
  std::string principal;
  // At most this many events: 0 means kDefaultPageSize; capped at
  // kMaxPageSize. Negative: InvalidArgument.
  int page_size = 0;
  // A previous page's next_page_token; "": from the oldest event.
  std::string page_token;
};

struct AuditPage {
  // Oldest first.
  std::vector<cairn::v1::AuditEvent> events;
  // Non-empty when more events may follow.
  std::string next_page_token;
};

// Longest resource, message and principal kept in an event (characters).
inline constexpr size_t kMaxAuditFieldChars = 256;

class AuditLog {
 public:
  static constexpr int kDefaultPageSize = 100;
  static constexpr int kMaxPageSize = 1000;
  // List reads at most this many events per page (a principal filter that
  // matches few may return a short page with a next_page_token).
  static constexpr int kMaxScannedPerPage = 10000;

  // Opens the log kept in `store` (not owned; must outlive the log) and
  // deletes the events older than options.retention. InvalidArgument if
  // retention is not positive; the store's errors.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      AuditStore* store, AuditLogOptions options);

  // Whether a call of `full_method` that ended with `code` (a gRPC status
  // code number) is recorded: refusals (UNAUTHENTICATED, PERMISSION_DENIED)
  // always, methods that change state (auth/permissions.h) whatever their
  // code, other methods of the permission table only with record_reads.
  bool ShouldRecord(absl::string_view full_method, int code) const;
  // The same rule for a call outside the permission table (a SageMaker
  // operation): recorded if refused, if it changes state, or with
  // record_reads.
  bool ShouldRecordOperation(bool changes_state, int code) const;

  // Writes `event` durably, with event.time set to now and its principal,
  // resource and message cut to kMaxAuditFieldChars. Errors: the store's
  // (a failed store refuses every write).
  absl::Status Record(cairn::v1::AuditEvent event);

  // Events matching `query`, oldest first. InvalidArgument naming
  // page_token or page_size for a bad one.
  absl::StatusOr<AuditPage> List(const AuditQuery& query) const;

  // Deletes the events older than the retention, now.
  absl::Status Purge();

 private:
  AuditLog(AuditStore* store, AuditLogOptions options, int64_t last_id)
      : store_(store), options_(std::move(options)), last_id_(last_id) {}

  // The first id of an event at `time` (microseconds since the epoch).
  static int64_t IdAt(absl::Time time);

  AuditStore* const store_;
  const AuditLogOptions options_;
  absl::Mutex mu_;
  // The largest id allocated so far.
  int64_t last_id_ ABSL_GUARDED_BY(mu_);
  // When expired events were last deleted.
  absl::Time last_purge_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace cairn::audit

#endif  // CAIRN_AUDIT_AUDIT_LOG_H_
