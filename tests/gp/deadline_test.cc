// Suggestion deadlines: DeadlineWorker's contract and GpBandit's quasi-random
// answer past the deadline. Slow computations are made slow by blocking
// them on a notification the test releases, so nothing depends on timing.
#include <atomic>
#include <set>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tuner/gp/deadline_worker.h"
#include "tuner/gp/gp_bandit.h"

namespace cairn::gp {
namespace {

TEST(DeadlineWorkerTest, MissedDeadlineKeepsOneComputationRunning) {
  DeadlineWorker worker(0);
  absl::Notification release;
  std::atomic<int> first_done{0}, second_runs{0};
  // Blocked until released: misses any deadline.
  EXPECT_FALSE(worker.Run(
      [&] {
        release.WaitForNotification();
        first_done = 1;
      },
      absl::Now() + absl::Milliseconds(5)));
  EXPECT_TRUE(worker.busy());
  // The first is still running: the second is not started.
  EXPECT_FALSE(
      worker.Run([&] { ++second_runs; }, absl::Now() + absl::Milliseconds(5)));
  release.Notify();
  worker.Wait();
  EXPECT_EQ(first_done, 1);
  EXPECT_EQ(second_runs, 0);
  EXPECT_FALSE(worker.busy());
  // Idle again: a computation that finishes in time reports it.
  EXPECT_TRUE(worker.Run([&] { ++second_runs; }, absl::InfiniteFuture()));
  EXPECT_EQ(second_runs, 1);
}

TEST(DeadlineWorkerTest, DestructorWaitsForARunningComputation) {
  std::atomic<bool> done{false};
  absl::Notification release;
  {
    DeadlineWorker worker(0);
    EXPECT_FALSE(worker.Run(
        [&] {
          release.WaitForNotification();
          done = true;
        },
        absl::Now()));
    release.Notify();
  }
  EXPECT_TRUE(done);
}

// 15 completed points of a 3-D sphere: past the initial design, so a
// suggestion needs a GP fit.
BanditData SphereData() {
  BanditData data;
  data.x.resize(15, 3);
  data.y.resize(15, 1);
  for (int i = 0; i < 15; ++i) {
    for (int d = 0; d < 3; ++d) data.x(i, d) = ((i * 7 + d * 5) % 15) / 14.0;
    data.y(i, 0) = -(data.x.row(i).array() - 0.3).square().sum();
    data.infeasible.push_back(false);
  }
  data.num_trials = 15;
  return data;
}

TEST(GpBanditDeadlineTest, PastTheDeadlineAnswersQuasiRandomAndKeepsTheFit) {
  GpBanditOptions options;
  // Already past when Suggest waits: the GP cannot have fitted by then.
  options.suggest_deadline_seconds = 1e-9;
  GpBandit bandit(MixedSpace(std::vector<Dimension>(3)), options);
  const BanditData data = SphereData();
  auto points = bandit.Suggest(data, 3, 1);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 3u);
  EXPECT_EQ(bandit.last_kinds(), std::vector<std::string>(3, kDeadlineKind));
  std::set<std::vector<double>> distinct;
  for (const Eigen::VectorXd& p : *points) {
    EXPECT_TRUE((p.array() >= 0).all() && (p.array() <= 1).all());
    distinct.insert(std::vector<double>(p.data(), p.data() + p.size()));
  }
  EXPECT_EQ(distinct.size(), 3u);
  // The abandoned computation still fits the checkpoint, for later calls.
  bandit.TEST_WaitForSuggestion();
  EXPECT_EQ(bandit.foreground_fits(), 1);
}

TEST(GpBanditDeadlineTest, WithoutADeadlineTheModelAnswers) {
  GpBandit bandit(MixedSpace(std::vector<Dimension>(3)));
  auto points = bandit.Suggest(SphereData(), 1, 1);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(bandit.last_kinds().size(), 1u);
  EXPECT_EQ(bandit.last_kinds()[0], "ucb");
}

}  // namespace
}  // namespace cairn::gp
