// Cache of checkpoint hyperparameter fits for GpBandit, keyed by a
// fingerprint of what the fit depends on (the first n_c observations, the
// objective and the seed). A fit can be started ahead of time on a
// background thread (Prefetch) so that a later suggestion finds it ready
// instead of paying for it; the value is the same whichever thread computed
// it, so the cache never changes results.
#ifndef CAIRN_TUNER_GP_CHECKPOINT_FITS_H_
#define CAIRN_TUNER_GP_CHECKPOINT_FITS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <future>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tuner/gp/gaussian_process.h"

namespace cairn::gp {

class CheckpointFits {
 public:
  using Fit = std::function<absl::StatusOr<GpHyperparameters>()>;

  // `background_nice`: how much lower than the thread that starts them (a
  // nice increment, 0 for none) background fits run. Keep it small where
  // other processes load the machine: Get waits for a background fit, which
  // a high nice value can starve.
  // `capacity`: entries kept (oldest dropped first), at least 1.
  explicit CheckpointFits(int background_nice = 0, int capacity = 16);
  // Waits for background fits still running (each is one bounded fit).
  ~CheckpointFits();
  CheckpointFits(const CheckpointFits&) = delete;
  CheckpointFits& operator=(const CheckpointFits&) = delete;

  // The fit stored under `key`: a cached one, one running in the background
  // (waited for: it computes the same value, and doing the work twice would
  // only slow both on a busy machine), or else `fit` run on the calling
  // thread and stored. Thread-safe.
  absl::StatusOr<GpHyperparameters> Get(uint64_t key, const Fit& fit);

  // Starts `fit` on a new background thread and stores it under `key`,
  // unless `key` is cached or running already. Thread-safe.
  void Prefetch(uint64_t key, Fit fit);

  // Waits until no background fit is running (for tests). Thread-safe.
  void WaitForBackgroundFits() const;

  // Counters for tests: fits run by Get on the calling thread, fits
  // started by Prefetch.
  int foreground_fits() const;
  int background_fits() const;

 private:
  struct Entry {
    uint64_t key;
    std::shared_future<absl::StatusOr<GpHyperparameters>> value;
  };

  // The entry for `key`, or nullptr.
  const Entry* Find(uint64_t key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds an entry; moves the entries dropped for capacity into `*dropped`
  // (destroyed by the caller after unlocking: one still running blocks).
  void Add(Entry entry, std::deque<Entry>* dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int background_nice_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
  int foreground_fits_ ABSL_GUARDED_BY(mu_) = 0;
  int background_fits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_CHECKPOINT_FITS_H_
