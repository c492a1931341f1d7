// A util::Clock that moves only when a test advances it (from a fixed start),
// for tests of timeouts, deadlines and schedules.
#ifndef CAIRN_TESTS_TESTING_MANUAL_CLOCK_H_
#define CAIRN_TESTS_TESTING_MANUAL_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "util/clock.h"

namespace cairn::testing {

// Thread-safe.
class ManualClock : public util::Clock {
 public:
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(1700000000);
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_MANUAL_CLOCK_H_
