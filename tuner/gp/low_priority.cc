// Per-thread nice values (Linux).
#include "tuner/gp/low_priority.h"

#include <algorithm>
#include <cerrno>
#include <thread>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cairn::gp {

void LowerCurrentThreadPriority(int increment) {
#ifdef __linux__
  if (increment <= 0) return;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return;
  (void)setpriority(PRIO_PROCESS, tid, std::min(19, now + increment));
#else
  (void)increment;
#endif
}

int CurrentThreadNice() {
#ifdef __linux__
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  return getpriority(PRIO_PROCESS, tid);
#else
  return 0;
#endif
}

void RunAtLowerPriority(int increment, const std::function<void()>& fn) {
  if (increment <= 0) {
    fn();
    return;
  }
  std::thread worker([increment, &fn] {
    LowerCurrentThreadPriority(increment);
    fn();
  });
  worker.join();
}

}  // namespace cairn::gp
