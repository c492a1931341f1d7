// Runs one computation at a time on a lower-priority thread and waits for
// it only until a deadline: a GP suggestion that a loaded machine delays
// can then be answered some other way while the computation finishes (and
// fills caches) in the background.
#ifndef CAIRN_TUNER_GP_DEADLINE_WORKER_H_
#define CAIRN_TUNER_GP_DEADLINE_WORKER_H_

#include <functional>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace cairn::gp {

// Not thread-safe: one caller at a time (the GpBandit that owns it).
class DeadlineWorker {
 public:
  // Computations run at `nice` above the caller's nice value (see
  // low_priority.h; 0: the same priority, still on their own thread).
  explicit DeadlineWorker(int nice) : nice_(nice) {}
  // Waits for a computation still running.
  ~DeadlineWorker();
  DeadlineWorker(const DeadlineWorker&) = delete;
  DeadlineWorker& operator=(const DeadlineWorker&) = delete;

  // Starts `fn` on a new thread and waits for it until `deadline`; returns
  // true when it finished in time. Returns false at once, without starting
  // `fn`, while an earlier computation is still running: never two at once,
  // so missed deadlines cannot pile up CPU work, and callers queued behind
  // a slow computation are answered without waiting for it. On false, `fn`
  // was not started, is still running or finished only after the deadline
  // (a caller preempted past it still gets false): it must own (share)
  // whatever it writes, and the caller must not read that until a later Run
  // or Wait.
  bool Run(std::function<void()> fn, absl::Time deadline);

  // Waits for a computation still running (tests, shutdown).
  void Wait();

  // Whether a computation started by an earlier Run is still running.
  bool busy() const;

 private:
  struct Job {
    std::thread thread;
    absl::Notification done;
  };

  const int nice_;
  std::shared_ptr<Job> running_;  // The last computation, until joined.
};

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_DEADLINE_WORKER_H_
