// GPU slots: which GPUs are free; a trial waits until it gets all it asks for
// and two running trials never share a GPU.
#ifndef CAIRN_JOBS_GPU_SLOTS_H_
#define CAIRN_JOBS_GPU_SLOTS_H_

#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace cairn::jobs {

// Thread-safe.
class GpuSlots {
 public:
  explicit GpuSlots(int total)
      : total_(total > 0 ? total : 0), used_(total_, false) {}

  // `count` free GPU indices, marked used; nullopt if not enough are free.
  // count == 0 always succeeds with an empty list.
  std::optional<std::vector<int>> Acquire(int count);
  // Marks the GPUs given back. Idempotent per index.
  void Release(const std::vector<int>& gpus);
  // Marks specific GPUs used (recovery); returns false if one is taken.
  bool Claim(const std::vector<int>& gpus);

  int total() const { return total_; }
  int in_use() const;

 private:
  const int total_;  // Fixed at construction: read without mu_.
  mutable absl::Mutex mu_;
  std::vector<bool> used_ ABSL_GUARDED_BY(mu_);  // total_ entries.
};

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_GPU_SLOTS_H_
