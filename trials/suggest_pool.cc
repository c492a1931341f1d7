// Round-robin queues of suggestion asks, served by a bounded set of
// threads in coalesced batches. See suggest_pool.h.
#include "trials/suggest_pool.h"

#include <algorithm>
#include <utility>

namespace cairn {

SuggestPool::SuggestPool(const SuggestPoolOptions& options, BatchFn run)
    : max_batch_(std::max(1, options.max_batch)), run_(std::move(run)) {
  const int n = std::max(1, options.workers);
  workers_.reserve(n);
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

SuggestPool::~SuggestPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void SuggestPool::Enqueue(int64_t study_id, Queue& q) {
  if (q.running || q.in_line || q.waiting.empty()) return;
  q.in_line = true;
  line_.push_back(study_id);
}

bool SuggestPool::Submit(int64_t study_id, SuggestAsk* ask,
                         absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  Queue& q = queues_[study_id];
  q.waiting.push_back(ask);
  Enqueue(study_id, q);
  auto answered = [this, ask]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return answered_.contains(ask);
  };
  if (!mu_.AwaitWithDeadline(absl::Condition(&answered), deadline)) {
    // `q` may have been rehashed meanwhile: look the study up again.
    Queue& now = queues_[study_id];
    auto it = std::find(now.waiting.begin(), now.waiting.end(), ask);
    if (it != now.waiting.end()) {
      now.waiting.erase(it);
      if (now.waiting.empty() && now.in_line) {
        now.in_line = false;
        line_.erase(std::find(line_.begin(), line_.end(), study_id));
      }
      if (now.waiting.empty() && !now.running) queues_.erase(study_id);
      return false;
    }
    mu_.Await(absl::Condition(&answered));  // A batch has taken it.
  }
  answered_.erase(ask);
  return true;
}

int SuggestPool::Waiting(int64_t study_id) const {
  absl::MutexLock lock(&mu_);
  auto it = queues_.find(study_id);
  return it == queues_.end() ? 0 : static_cast<int>(it->second.waiting.size());
}

bool SuggestPool::TakeBatch(int64_t* study_id,
                            std::vector<SuggestAsk*>* batch) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !line_.empty();
  };
  mu_.Await(absl::Condition(&ready));
  if (stopping_) return false;
  *study_id = line_.front();
  line_.pop_front();
  Queue& q = queues_[*study_id];
  q.in_line = false;
  q.running = true;
  int total = 0;
  while (!q.waiting.empty() &&
         (batch->empty() || total + q.waiting.front()->count <= max_batch_)) {
    total += q.waiting.front()->count;
    batch->push_back(q.waiting.front());
    q.waiting.pop_front();
  }
  return true;
}

void SuggestPool::EndBatch(int64_t study_id,
                           const std::vector<SuggestAsk*>& batch) {
  absl::MutexLock lock(&mu_);
  for (const SuggestAsk* ask : batch) answered_.insert(ask);
  Queue& q = queues_[study_id];
  q.running = false;
  if (q.waiting.empty()) {
    queues_.erase(study_id);
  } else {
    Enqueue(study_id, q);  // Behind every study already in line.
  }
}

void SuggestPool::WorkerLoop() {
  for (;;) {
    int64_t study_id = 0;
    std::vector<SuggestAsk*> batch;
    if (!TakeBatch(&study_id, &batch)) return;
    run_(study_id, batch);
    EndBatch(study_id, batch);
  }
}

}  // namespace cairn
