// SuggestPool on its own: studies take turns (a flooding study cannot
// starve another), one study's waiting asks are coalesced into batches, and
// an ask still queued at its deadline leaves the queue unanswered. The
// worker is held in its first batch while the queues fill, so every
// assertion is about order and counts, none about time.
#include "trials/suggest_pool.h"

#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/latched_designer.h"

namespace cairn {
namespace {

constexpr int64_t kFlood = 1;
constexpr int64_t kQuiet = 2;

// Records every batch (study and size); the first one waits at `latch`.
class Recorder {
 public:
  void Run(int64_t study_id, const std::vector<SuggestAsk*>& asks) {
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      first = batches_.empty();
      batches_.push_back({study_id, static_cast<int>(asks.size())});
    }
    if (first) latch_.EnterAndWait();
    for (SuggestAsk* ask : asks) ask->result = SuggestResult();
  }
  std::vector<std::pair<int64_t, int>> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  testing::Latch latch_;

 private:
  absl::Mutex mu_;
  std::vector<std::pair<int64_t, int>> batches_ ABSL_GUARDED_BY(mu_);
};

// Waits (up to 10 s) until `pool` has `n` asks of `study_id` waiting.
bool AwaitWaiting(const SuggestPool& pool, int64_t study_id, int n) {
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (pool.Waiting(study_id) != n) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(SuggestPoolTest, QuietStudyIsServedBeforeTheFloodDrains) {
  Recorder recorder;
  SuggestPoolOptions options;
  options.workers = 1;
  options.max_batch = 4;
  SuggestPool pool(options, [&](int64_t id, const std::vector<SuggestAsk*>& a) {
    recorder.Run(id, a);
  });
  std::vector<SuggestAsk> asks(14);
  std::vector<std::thread> callers;
  auto submit = [&](int64_t study, SuggestAsk* ask) {
    callers.emplace_back([&pool, study, ask] {
      EXPECT_TRUE(pool.Submit(study, ask, absl::InfiniteFuture()));
    });
  };
  submit(kFlood, &asks[0]);
  ASSERT_TRUE(recorder.latch_.AwaitEntered(1));  // The worker is held.
  for (int i = 1; i <= 12; ++i) submit(kFlood, &asks[i]);
  ASSERT_TRUE(AwaitWaiting(pool, kFlood, 12));
  submit(kQuiet, &asks[13]);
  ASSERT_TRUE(AwaitWaiting(pool, kQuiet, 1));
  recorder.latch_.Open();
  for (std::thread& t : callers) t.join();
  // The quiet study's one ask runs right after the batch in progress; the
  // flood's 12 follow as 3 batches of max_batch.
  const std::vector<std::pair<int64_t, int>> expected = {
      {kFlood, 1}, {kQuiet, 1}, {kFlood, 4}, {kFlood, 4}, {kFlood, 4}};
  EXPECT_EQ(recorder.batches(), expected);
  for (const SuggestAsk& ask : asks) EXPECT_TRUE(ask.result.ok());
}

TEST(SuggestPoolTest, AskPastItsDeadlineLeavesTheQueueUnanswered) {
  Recorder recorder;
  SuggestPool pool({}, [&](int64_t id, const std::vector<SuggestAsk*>& a) {
    recorder.Run(id, a);
  });
  SuggestAsk held, late;
  std::thread caller(
      [&] { EXPECT_TRUE(pool.Submit(kFlood, &held, absl::InfiniteFuture())); });
  ASSERT_TRUE(recorder.latch_.AwaitEntered(1));
  // The only worker is held, so this ask can only wait out its deadline.
  EXPECT_FALSE(pool.Submit(kQuiet, &late, absl::Now()));
  EXPECT_EQ(pool.Waiting(kQuiet), 0);
  EXPECT_EQ(late.result.status().code(), absl::StatusCode::kUnknown);
  recorder.latch_.Open();
  caller.join();
  EXPECT_EQ(recorder.batches().size(), 1u);  // Nothing ran for `late`.
}

}  // namespace
}  // namespace cairn
