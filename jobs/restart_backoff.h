// When a trial whose job failed may start again: its first restart waits
// `initial` after the exit, each later restart of the same trial
// `multiplier` times longer than the one before, at most `max`. Kept in
// memory only: a cairnd restart starts waiting trials at once.
#ifndef CAIRN_JOBS_RESTART_BACKOFF_H_
#define CAIRN_JOBS_RESTART_BACKOFF_H_

#include <iterator>
#include <map>
#include <set>
#include <string>

#include "absl/time/time.h"

namespace cairn::jobs {

// Not thread-safe: one owner (the job runner, under its pass lock).
class RestartBackoff {
 public:
  RestartBackoff(absl::Duration initial, double multiplier, absl::Duration max);

  // The wait before restart number `restart` (1 for the first).
  absl::Duration Delay(int restart) const;

  // `trial_name` may start again at `now` + Delay(restart); returns that
  // delay.
  absl::Duration Schedule(const std::string& trial_name, int restart,
                          absl::Time now);

  // True while `trial_name` waits out its delay at `now`.
  bool Waiting(const std::string& trial_name, absl::Time now) const;

  // Forgets `trial_name`'s wait (it started).
  void Forget(const std::string& trial_name);

  // Forgets every trial for which `keep` is false (no longer pending).
  template <typename Keep>
  void ForgetUnless(Keep keep) {
    for (auto it = restart_at_.begin(); it != restart_at_.end();) {
      it = keep(it->first) ? std::next(it) : restart_at_.erase(it);
    }
  }

  bool empty() const { return restart_at_.empty(); }

 private:
  const absl::Duration initial_;
  const double multiplier_;
  const absl::Duration max_;
  // When each waiting trial may start again, by trial name.
  std::map<std::string, absl::Time> restart_at_;
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_RESTART_BACKOFF_H_
