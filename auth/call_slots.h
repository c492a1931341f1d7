// CallSlots: at most N calls of one principal in progress at once. cairnd's
// synchronous gRPC server gives every call in progress a thread; without a
// bound, one token (a training job's included) could hold streams open
// until cairnd ran out of memory: 2,000 open ReportMeasurements streams
// were 2,018 threads. A call past the bound is refused at once with
// ResourceExhausted, so other principals are served as before.
//
// Thread-safe.
#ifndef CAIRN_AUTH_CALL_SLOTS_H_
#define CAIRN_AUTH_CALL_SLOTS_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace cairn::auth {

class CallSlots {
 public:
  // `max_per_principal` > 0: calls one principal may have in progress.
  explicit CallSlots(int max_per_principal) : max_(max_per_principal) {}

  // Counts `call` (any key unique while the call lasts) as in progress for
  // `principal`. ResourceExhausted naming the principal and the limit when
  // it already has max_per_principal calls. A call that holds a slot keeps
  // it (OK) whatever principal it names again.
  absl::Status Acquire(const void* call, const std::string& principal)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Frees `call`'s slot; nothing for a call that holds none.
  void Release(const void* call) ABSL_LOCKS_EXCLUDED(mu_);

  // Calls of `principal` in progress.
  int InProgress(const std::string& principal) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int max_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const void*, std::string> holder_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int> count_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_CALL_SLOTS_H_
