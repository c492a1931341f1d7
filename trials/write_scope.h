// WriteScope: what one StudyManager call collects on its way (the store
// writes to await before it returns, and where its time went). Internal to
// trials/.
#ifndef CAIRN_TRIALS_WRITE_SCOPE_H_
#define CAIRN_TRIALS_WRITE_SCOPE_H_

#include <chrono>
#include <memory>
#include <vector>

#include "store/store.h"

namespace cairn {

// The store writes of one call. `pending` collects, for each study the call
// locked, the study's latest queued write at the moment the lock was released
// (awaited before the call returns, so that nothing the call returns rests on
// a write that is not durable yet); `wrote` says the call queued a write
// itself (then the wait is reported to the observer as a store write).
struct WriteScope {
  std::vector<std::shared_ptr<PendingWrite>> pending;
  bool wrote = false;
  // Where the call's time went before it awaits its writes (reported to the
  // observer's OnCallPhase): waiting for study locks (LockedStudy) and the
  // suggestion gate, the designer, and queueing store writes.
  struct Times {
    double lock_wait = 0;
    double designer = 0;
    double append = 0;
  } times;
};

// Runs `f` and adds the seconds it took to `*seconds`; returns its result.
template <typename F>
auto Timed(double* seconds, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  *seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}

}  // namespace cairn

#endif  // CAIRN_TRIALS_WRITE_SCOPE_H_
