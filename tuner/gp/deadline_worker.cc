// One lower-priority computation at a time, waited for until a deadline.
#include "tuner/gp/deadline_worker.h"

#include <utility>

#include "tuner/gp/low_priority.h"

namespace cairn::gp {

DeadlineWorker::~DeadlineWorker() { Wait(); }

void DeadlineWorker::Wait() {
  if (running_ == nullptr) return;
  running_->thread.join();
  running_.reset();
}

bool DeadlineWorker::busy() const {
  return running_ != nullptr && !running_->done.HasBeenNotified();
}

bool DeadlineWorker::Run(std::function<void()> fn, absl::Time deadline) {
  if (busy()) return false;
  Wait();
  auto job = std::make_shared<Job>();
  Job* raw = job.get();
  running_ = job;
  // The thread owns `fn`; `raw` stays valid until the thread is joined
  // (running_ or this frame keeps the Job alive).
  raw->thread = std::thread([raw, fn = std::move(fn), nice = nice_] {
    LowerCurrentThreadPriority(nice);
    fn();
    raw->done.Notify();
  });
  // In time only when seen done by the deadline: a computation that beat a
  // preempted caller past it still counts as late, so the outcome depends
  // on the deadline, not on how the threads were scheduled.
  if (!raw->done.WaitForNotificationWithDeadline(deadline) ||
      absl::Now() > deadline) {
    return false;
  }
  Wait();
  return true;
}

}  // namespace cairn::gp
