// GPU slot accounting.
#include "jobs/gpu_slots.h"

namespace cairn::jobs {

std::optional<std::vector<int>> GpuSlots::Acquire(int count) {
  absl::MutexLock lock(&mu_);
  std::vector<int> got;
  for (int i = 0; i < total_ && static_cast<int>(got.size()) < count; ++i) {
    if (!used_[i]) got.push_back(i);
  }
  if (static_cast<int>(got.size()) < count) return std::nullopt;
  for (int i : got) used_[i] = true;
  return got;
}

void GpuSlots::Release(const std::vector<int>& gpus) {
  absl::MutexLock lock(&mu_);
  for (int i : gpus) {
    if (i >= 0 && i < total_) used_[i] = false;
  }
}

bool GpuSlots::Claim(const std::vector<int>& gpus) {
  absl::MutexLock lock(&mu_);
  for (int i : gpus) {
    if (i < 0 || i >= total_ || used_[i]) return false;
  }
  for (int i : gpus) used_[i] = true;
  return true;
}

int GpuSlots::in_use() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (bool u : used_) n += u ? 1 : 0;
  return n;
}

}  // namespace cairn::jobs
