// Time as the components see it, swappable in tests (LevelDB's Env idea).
#ifndef CAIRN_UTIL_CLOCK_H_
#define CAIRN_UTIL_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cairn::util {

// A Clock is safe for concurrent use.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // The process-wide wall clock. Never null; not owned by the caller.
  static Clock* Real();
};

}  // namespace cairn::util

#endif  // CAIRN_UTIL_CLOCK_H_
