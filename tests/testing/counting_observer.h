// A StudyObserver that counts designer runs, the suggestions they made and
// deadline fallbacks, for tests of the study controller. Thread-safe.
#ifndef CAIRN_TESTS_TESTING_COUNTING_OBSERVER_H_
#define CAIRN_TESTS_TESTING_COUNTING_OBSERVER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "trials/observer.h"

namespace cairn::testing {

class CountingObserver : public StudyObserver {
 public:
  void OnSuggest(const std::string&, double, int count) override {
    absl::MutexLock lock(&mu_);
    ++runs_;
    suggested_ += count;
  }
  // Fallbacks happen only for GP_BANDIT studies.
  void OnDeadlineFallbacks(const std::string& algorithm, int count) override {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(algorithm, "GP_BANDIT");
    fallbacks_ += count;
  }
  int runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  int suggested() {
    absl::MutexLock lock(&mu_);
    return suggested_;
  }
  int fallbacks() {
    absl::MutexLock lock(&mu_);
    return fallbacks_;
  }

 private:
  absl::Mutex mu_;
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
  int suggested_ ABSL_GUARDED_BY(mu_) = 0;
  int fallbacks_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_COUNTING_OBSERVER_H_
