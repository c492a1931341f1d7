// Running GP computations below the priority of request serving: a
// suggestion or a background fit is CPU-bound for tens of milliseconds, and
// on a machine with few cores it would otherwise delay other RPCs (GetStudy,
// reports) that are each a fraction of a millisecond of work.
#ifndef CAIRN_TUNER_GP_LOW_PRIORITY_H_
#define CAIRN_TUNER_GP_LOW_PRIORITY_H_

#include <functional>

namespace cairn::gp {

// Raises the calling thread's nice value by `increment`, at most to 19
// (Linux: per thread; elsewhere a no-op). Best effort: errors are ignored.
// An unprivileged thread cannot undo it, so call it only on threads made
// for low-priority work.
void LowerCurrentThreadPriority(int increment);

// The calling thread's nice value (Linux; 0 elsewhere).
int CurrentThreadNice();

// Runs `fn` on a new thread whose nice value is `increment` above the
// caller's and waits for it; with increment <= 0 runs it on the calling
// thread.
void RunAtLowerPriority(int increment, const std::function<void()>& fn);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_LOW_PRIORITY_H_
