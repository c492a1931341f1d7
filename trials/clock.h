// The controller's view of time, swappable in tests (LevelDB's Env idea).
#ifndef CAIRN_TRIALS_CLOCK_H_
#define CAIRN_TRIALS_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cairn {

// A Clock is safe for concurrent use.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // The process-wide wall clock. Never null; not owned by the caller.
  static Clock* Real();
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_CLOCK_H_
