// A latch that holds designer calls until a test opens it, and a designer
// that waits at one before every call: for tests of what other calls do
// while a suggestion computes. Thread-safe.
#ifndef CAIRN_TESTS_TESTING_LATCHED_DESIGNER_H_
#define CAIRN_TESTS_TESTING_LATCHED_DESIGNER_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tuner/designer.h"

namespace cairn::testing {

// Blocks every caller of EnterAndWait until opened; counts callers.
class Latch {
 public:
  void EnterAndWait() {
    absl::MutexLock lock(&mu_);
    ++entered_;
    mu_.Await(absl::Condition(&open_));
  }
  // Waits until `n` calls have entered (or 10 s passed); returns whether.
  bool AwaitEntered(int n) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return entered_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  int entered() {
    absl::MutexLock lock(&mu_);
    return entered_;
  }

 private:
  absl::Mutex mu_;
  int entered_ ABSL_GUARDED_BY(mu_) = 0;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

// `inner`, each call held at `latch` first.
class LatchedDesigner : public tuner::Designer {
 public:
  LatchedDesigner(std::unique_ptr<tuner::Designer> inner, Latch* latch)
      : inner_(std::move(inner)), latch_(latch) {}
  absl::StatusOr<std::vector<tuner::Suggestion>> Suggest(
      const tuner::DesignerContext& context, int count) override {
    latch_->EnterAndWait();
    return inner_->Suggest(context, count);
  }

 private:
  std::unique_ptr<tuner::Designer> inner_;
  Latch* latch_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_LATCHED_DESIGNER_H_
