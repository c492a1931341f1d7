// GP bandit engine: initial design, batches with pending points, determinism,
// background fits, restarts and infeasible handling: the fast unit tests
// (under a second each in the default build), which the sanitizer builds
// also run. Whole searches over many seeds that check the optimization's
// quality are in gp_bandit_quality_test.cc.
#include "tuner/gp/gp_bandit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gp/bandit_test_util.h"
#include "tuner/gp/checkpoint_fits.h"
#include "tuner/gp/low_priority.h"

namespace cairn::gp {
namespace {

TEST(GpBanditTest, InitialDesignStartsAtTheCenter) {
  GpBandit bandit(Continuous(3));
  BanditData data;
  data.x.resize(0, 3);
  data.y.resize(0, 1);
  auto s = bandit.Suggest(data, 2, 42);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0], Eigen::VectorXd::Constant(3, 0.5));
  EXPECT_NE((*s)[1], (*s)[0]);
  EXPECT_EQ(bandit.num_initial_points(), 6);
}

// After 8 completed trials without improvement the suggestion searches away
// from the incumbent; with one fewer it does not.
TEST(GpBanditTest, StalledSearchRestartsAwayFromTheIncumbent) {
  GpBanditOptions options;
  options.restart_after_stalled_trials = 8;
  GpBandit bandit(Continuous(2), options);
  BanditData data;
  data.x.resize(0, 2);
  data.y.resize(0, 1);
  Rng rng(5);
  for (int i = 0; i < 12; ++i) {
    Eigen::VectorXd x(2);
    x << rng.Uniform(), rng.Uniform();
    Append(data, x, Sphere(x));
  }
  Eigen::VectorXd best(2);
  best << 0.37, 0.37;
  Append(data, best, 0.0);  // The maximum.
  for (int i = 0; i < 7; ++i) {
    Eigen::VectorXd x = best.array() + 0.01 * (i + 1);
    Append(data, x, Sphere(x));
  }
  auto s = bandit.Suggest(data, 1, 3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(bandit.last_kinds()[0], "ucb");
  Eigen::VectorXd x = best.array() + 0.08;
  Append(data, x, Sphere(x));  // The 8th without improvement.
  s = bandit.Suggest(data, 1, 3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(bandit.last_kinds()[0], "restart");
  EXPECT_GE(((*s)[0] - best).cwiseAbs().maxCoeff(), 0.25);
}

TEST(GpBanditTest, RejectsInconsistentData) {
  GpBandit bandit(Continuous(2));
  BanditData data;
  data.x.resize(3, 2);
  data.y.resize(2, 1);
  data.infeasible.assign(3, false);
  EXPECT_EQ(bandit.Suggest(data, 1, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  data.y.resize(3, 1);
  EXPECT_EQ(bandit.Suggest(data, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GpBanditTest, BatchOfEightWithPendingHasNoDuplicates) {
  GpBandit bandit(Continuous(3));
  BanditData data;
  RunLoop(bandit, Sphere, 12, 7, &data);
  // Two pending points, then a batch of 8.
  data.pending.resize(2, 3);
  data.pending.row(0) = data.x.row(data.x.rows() - 1);
  data.pending.row(1).setConstant(0.37);
  auto s = bandit.Suggest(data, 8, 7);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 8u);
  std::vector<Eigen::VectorXd> all(s->begin(), s->end());
  for (int i = 0; i < 2; ++i) all.push_back(data.pending.row(i).transpose());
  double min_dist = INFINITY;
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      min_dist = std::min(min_dist, (all[i] - all[j]).norm());
    }
  }
  // Pure exploration spreads the batch: no two points nearly coincide.
  EXPECT_GT(min_dist, 1e-3);
}

TEST(GpBanditTest, SmallDiscreteSpaceNeverRepeatsPendingPoints) {
  // 3 x 3 grid = 9 points; 6 completed, 2 pending, batch of 8.
  std::vector<Dimension> dims(2);
  dims[0].grid = {0.0, 0.5, 1.0};
  dims[1].kind = Dimension::Kind::kCategorical;
  dims[1].num_categories = 3;
  GpBanditOptions options;
  options.num_initial_points = 3;
  GpBandit bandit(MixedSpace(dims), options);
  BanditData data;
  data.x.resize(0, 2);
  data.y.resize(0, 1);
  const double grid[] = {0.0, 0.5, 1.0};
  for (int i = 0; i < 6; ++i) {
    Eigen::Vector2d x(grid[i % 3], i / 3);
    Append(data, x, x[0] + x[1]);
  }
  data.pending.resize(2, 2);
  data.pending << 0.0, 2.0, 0.5, 2.0;
  auto s = bandit.Suggest(data, 8, 3);
  ASSERT_TRUE(s.ok()) << s.status();
  // Only 7 points differ from the pending ones.
  EXPECT_EQ(s->size(), 7u);
  std::set<std::pair<double, double>> seen;
  for (const Eigen::VectorXd& x : *s) {
    EXPECT_TRUE(seen.insert({x[0], x[1]}).second) << x.transpose();
    EXPECT_FALSE(x[1] == 2.0 && (x[0] == 0.0 || x[0] == 0.5));
  }
  // The unexplored, best-looking point comes first.
  EXPECT_EQ((*s)[0], Eigen::Vector2d(1.0, 2.0));
}

TEST(GpBanditTest, DeterministicForSeedWithOrWithoutCache) {
  GpBandit warm(Continuous(2));
  BanditData data;
  RunLoop(warm, Sphere, 25, 5, &data);
  GpBandit cold(Continuous(2));
  auto a = warm.Suggest(data, 3, 5);
  auto b = cold.Suggest(data, 3, 5);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i], (*b)[i]);
  auto c = cold.Suggest(data, 3, 6);
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*a)[0], (*c)[0]);
}

// Past background_fit_trials, a suggestion starts the current checkpoint's
// full fit in the background and uses the one before; the next checkpoint's
// suggestions find that background fit ready (no fit on the caller's
// thread), and the points equal those of a fresh instance that fits
// everything itself.
TEST(GpBanditTest, BackgroundFitIsUsedAndKeepsResultsDeterministic) {
  GpBanditOptions options;
  options.background_fit_trials = 20;
  GpBandit bandit(Continuous(2), options);
  BanditData data;
  // Suggestions at 0..24 completed: checkpoints every 2 past 20 (20 itself
  // fitted in the foreground); 22 and 24 start in the background.
  RunLoop(bandit, Sphere, 25, 7, &data);
  EXPECT_EQ(bandit.background_fits(), 2);
  bandit.WaitForBackgroundFits();
  const int foreground = bandit.foreground_fits();
  Append(data, Eigen::Vector2d(0.1, 0.9), Sphere(Eigen::Vector2d(0.1, 0.9)));
  // 26 completed: uses checkpoint 24, fitted in the background at 24.
  auto warm = bandit.Suggest(data, 2, 7);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(bandit.foreground_fits(), foreground);
  GpBandit fresh(Continuous(2), options);
  auto cold = fresh.Suggest(data, 2, 7);
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_EQ(fresh.foreground_fits(), 1);
  ASSERT_EQ(warm->size(), cold->size());
  for (size_t i = 0; i < warm->size(); ++i) EXPECT_EQ((*warm)[i], (*cold)[i]);
  ASSERT_EQ(bandit.last_hyperparameters().size(), 1u);
  EXPECT_EQ(bandit.last_hyperparameters()[0].Pack(),
            fresh.last_hyperparameters()[0].Pack());
}

TEST(GpBanditTest, BackgroundFitsRunAtLowerPriority) {
  CheckpointFits fits(/*background_nice=*/5);
  const int caller = CurrentThreadNice();
  fits.Prefetch(1, [] {
    GpHyperparameters h;
    h.log_signal_variance = CurrentThreadNice();
    return absl::StatusOr<GpHyperparameters>(h);
  });
  fits.WaitForBackgroundFits();
  int calls = 0;
  auto h = fits.Get(1, [&calls] {
    ++calls;
    return absl::StatusOr<GpHyperparameters>(GpHyperparameters{});
  });
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(calls, 0);  // Waited for the background fit.
  EXPECT_EQ(h->log_signal_variance, std::min(19, caller + 5));
  EXPECT_EQ(CurrentThreadNice(), caller);
  EXPECT_EQ(fits.background_fits(), 1);
  EXPECT_EQ(fits.foreground_fits(), 0);
}

// A suggestion that needs a fit running in the background waits for it
// rather than computing it a second time.
TEST(GpBanditTest, GetWaitsForARunningBackgroundFit) {
  CheckpointFits fits;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  fits.Prefetch(7, [released] {
    released.wait();
    GpHyperparameters background;
    background.log_noise_variance = -3.0;
    return absl::StatusOr<GpHyperparameters>(background);
  });
  std::atomic<int> calls = 0;
  auto get = std::async(std::launch::async, [&] {
    return fits.Get(7, [&calls] {
      ++calls;
      return absl::StatusOr<GpHyperparameters>(GpHyperparameters{});
    });
  });
  EXPECT_EQ(get.wait_for(std::chrono::milliseconds(50)),
            std::future_status::timeout);
  release.set_value();
  absl::StatusOr<GpHyperparameters> h = get.get();
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->log_noise_variance, -3.0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(fits.foreground_fits(), 0);
  EXPECT_EQ(fits.background_fits(), 1);
}

TEST(GpBanditTest, RunAtLowerPriorityLeavesTheCallerAlone) {
  const int caller = CurrentThreadNice();
  int inside = -100;
  RunAtLowerPriority(3, [&inside] { inside = CurrentThreadNice(); });
  EXPECT_EQ(inside, std::min(19, caller + 3));
  EXPECT_EQ(CurrentThreadNice(), caller);
  RunAtLowerPriority(0, [&inside] { inside = CurrentThreadNice(); });
  EXPECT_EQ(inside, caller);
}

TEST(GpBanditTest, InfeasibleRegionBecomesUnattractive) {
  // Maximize x0 + x1 but everything with x0 > 0.6 is infeasible.
  GpBandit bandit(Continuous(2));
  BanditData data;
  data.x.resize(0, 2);
  data.y.resize(0, 1);
  int infeasible_after_init = 0;
  for (int t = 0; t < 30; ++t) {
    auto s = bandit.Suggest(data, 1, 11);
    ASSERT_TRUE(s.ok());
    const Eigen::VectorXd& x = (*s)[0];
    const bool infeasible = x[0] > 0.6;
    if (t >= 10 && infeasible) ++infeasible_after_init;
    Append(data, x, infeasible ? NAN : x[0] + x[1], infeasible);
  }
  EXPECT_LE(infeasible_after_init, 8);
}

}  // namespace
}  // namespace cairn::gp
