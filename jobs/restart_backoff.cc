// Restart backoff of failed jobs.
#include "jobs/restart_backoff.h"

#include <algorithm>

namespace cairn::jobs {

RestartBackoff::RestartBackoff(absl::Duration initial, double multiplier,
                               absl::Duration max)
    : initial_(initial), multiplier_(multiplier), max_(max) {}

absl::Duration RestartBackoff::Delay(int restart) const {
  absl::Duration delay = initial_;
  for (int i = 1; i < restart && multiplier_ > 1 && delay < max_; ++i) {
    delay = delay * multiplier_;
  }
  return std::min(delay, max_);
}

absl::Duration RestartBackoff::Schedule(const std::string& trial_name,
                                        int restart, absl::Time now) {
  const absl::Duration delay = Delay(restart);
  restart_at_[trial_name] = now + delay;
  return delay;
}

bool RestartBackoff::Waiting(const std::string& trial_name,
                             absl::Time now) const {
  auto it = restart_at_.find(trial_name);
  return it != restart_at_.end() && now < it->second;
}

void RestartBackoff::Forget(const std::string& trial_name) {
  restart_at_.erase(trial_name);
}

}  // namespace cairn::jobs
