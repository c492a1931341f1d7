// SuggestPool: a bounded set of worker threads that run the expensive
// suggestions (GP_BANDIT) of every study, so that however many clients ask
// at once, at most `workers` model computations are waited on together and
// the gRPC threads of every other call never compete with a queue of them.
// (A GP computation past its own deadline finishes in the background, see
// tuner/gp/gp_bandit.h, so up to one more per study may run beside them.)
//
// Fair queuing: each study has its own FIFO of waiting asks, and studies
// take turns (round robin): a study whose batch just ran goes to the back
// of the line, so one study flooding asks cannot starve another.
//
// Coalescing: a worker takes *all* the asks its study has waiting (up to
// `max_batch` suggestions in total, at least one ask) and answers them with
// one batch function call, so N clients of one study waiting together cost
// one designer run for the N suggestions, not N runs one after another.
//
// Deadline: an ask still waiting in the queue (no batch took it) at its
// deadline leaves the queue unanswered, so the caller can answer another
// way (StudyManager falls back to quasi-random points). An ask a batch has
// taken is waited for to the end (the designer's own deadline bounds that).
//
// Thread-safe. The batch function runs on the pool's threads, one batch per
// study at a time, and must answer every ask it is given; the store writes
// of its answers are awaited by each asker after Submit returns.
#ifndef CAIRN_TRIALS_SUGGEST_POOL_H_
#define CAIRN_TRIALS_SUGGEST_POOL_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "trials/suggest_result.h"
#include "trials/write_scope.h"

namespace cairn {

// One SuggestTrials call waiting for the pool.
struct SuggestAsk {
  std::string parent;  // The study's resource name.
  int count = 1;
  std::string client_id;
  // Set by the batch function.
  absl::StatusOr<SuggestResult> result = absl::UnknownError("not answered");
  // Set by the batch function: the writes `result` rests on, which the
  // asker awaits (the batch does not, so that neither the pool's thread nor
  // the study's turn waits for a store sync), and where its time went.
  WriteScope scope;
};

struct SuggestPoolOptions {
  // Worker threads, >= 1. Default: 1.
  int workers = 1;
  // Most suggestions one batch answers (the sum of its asks' counts); an
  // ask asking for more alone is still taken alone. Default: 16.
  int max_batch = 16;
};

class SuggestPool {
 public:
  // Answers every ask of `asks`: one study's (`study_id`), in arrival
  // order. Called on a pool thread with no pool lock held.
  using BatchFn = std::function<void(int64_t study_id,
                                     const std::vector<SuggestAsk*>& asks)>;

  SuggestPool(const SuggestPoolOptions& options, BatchFn run);
  // Finishes the batch in progress and joins the workers. REQUIRES: no
  // Submit in progress.
  ~SuggestPool();
  SuggestPool(const SuggestPool&) = delete;
  SuggestPool& operator=(const SuggestPool&) = delete;

  // Queues `ask` for `study_id` and waits. True once a batch answered it
  // (ask->result set); false if `deadline` passed while it was still queued
  // (it is then removed and never answered). `ask` must live until then.
  bool Submit(int64_t study_id, SuggestAsk* ask, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Asks of `study_id` waiting, not yet taken by a batch (tests).
  int Waiting(int64_t study_id) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Queue {
    std::deque<SuggestAsk*> waiting;
    bool running = false;  // A batch of this study is in progress.
    bool in_line = false;  // In line_, waiting for its turn.
  };

  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Takes the next study's batch (blocks until one is waiting); false when
  // the pool is stopping.
  bool TakeBatch(int64_t* study_id, std::vector<SuggestAsk*>* batch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Marks `batch` answered and puts the study back in line if asks wait.
  void EndBatch(int64_t study_id, const std::vector<SuggestAsk*>& batch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Puts a study with waiting asks and no batch running in line.
  void Enqueue(int64_t study_id, Queue& q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_batch_;
  const BatchFn run_;

  // State below is protected by mu_.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, Queue> queues_ ABSL_GUARDED_BY(mu_);
  // Studies waiting for their turn, in turn order.
  std::deque<int64_t> line_ ABSL_GUARDED_BY(mu_);
  // Asks a batch has answered, until their Submit sees it.
  absl::flat_hash_set<const SuggestAsk*> answered_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::vector<std::thread> workers_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_SUGGEST_POOL_H_
