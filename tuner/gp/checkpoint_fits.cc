// Checkpoint fit cache with background (low-priority) fits.
#include "tuner/gp/checkpoint_fits.h"

#include <algorithm>
#include <utility>

#include "tuner/gp/low_priority.h"

namespace cairn::gp {

CheckpointFits::CheckpointFits(int background_nice, int capacity)
    : background_nice_(background_nice),
      capacity_(static_cast<size_t>(std::max(1, capacity))) {}

CheckpointFits::~CheckpointFits() {
  std::deque<Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    entries.swap(entries_);
  }
  for (Entry& e : entries) e.value.wait();
}

const CheckpointFits::Entry* CheckpointFits::Find(uint64_t key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

void CheckpointFits::Add(Entry entry, std::deque<Entry>* dropped) {
  entries_.push_back(std::move(entry));
  while (entries_.size() > capacity_) {
    dropped->push_back(std::move(entries_.front()));
    entries_.pop_front();
  }
}

absl::StatusOr<GpHyperparameters> CheckpointFits::Get(uint64_t key,
                                                      const Fit& fit) {
  std::shared_future<absl::StatusOr<GpHyperparameters>> value;
  {
    absl::MutexLock lock(&mu_);
    if (const Entry* e = Find(key); e != nullptr) value = e->value;
  }
  if (value.valid()) return value.get();
  absl::StatusOr<GpHyperparameters> h = fit();
  if (!h.ok()) return h;
  std::promise<absl::StatusOr<GpHyperparameters>> ready;
  ready.set_value(h);
  std::deque<Entry> dropped;
  {
    absl::MutexLock lock(&mu_);
    ++foreground_fits_;
    if (Find(key) == nullptr) Add({key, ready.get_future().share()}, &dropped);
  }
  return h;
}

void CheckpointFits::Prefetch(uint64_t key, Fit fit) {
  std::deque<Entry> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (Find(key) != nullptr) return;
    const int nice = background_nice_;
    ++background_fits_;
    Add({key, std::async(std::launch::async,
                         [nice, fit = std::move(fit)] {
                           LowerCurrentThreadPriority(nice);
                           return fit();
                         })
                  .share()},
        &dropped);
  }
}

void CheckpointFits::WaitForBackgroundFits() const {
  std::deque<Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    entries = entries_;
  }
  for (const Entry& e : entries) e.value.wait();
}

int CheckpointFits::foreground_fits() const {
  absl::MutexLock lock(&mu_);
  return foreground_fits_;
}

int CheckpointFits::background_fits() const {
  absl::MutexLock lock(&mu_);
  return background_fits_;
}

}  // namespace cairn::gp
