// Output power warp: which power the data chooses, and that the warp keeps
// the order of the values.
#include "tuner/gp/power_warp.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tuner/gp/output_warping.h"

namespace cairn::gp {
namespace {

// Values of -(sum of w_d (x_d - 0.33)^4) at the points of a 3-D grid on the
// unit cube (weights make them distinct), maximize orientation: a steep bowl
// whose values span decades.
std::vector<double> QuarticBowl() {
  const double w[3] = {1.0, 1.7, 2.9};
  std::vector<double> out;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      for (int k = 0; k < 6; ++k) {
        const int v[3] = {i, j, k};
        double s = 0;
        for (int d = 0; d < 3; ++d) s += w[d] * std::pow(0.2 * v[d] - 0.33, 4);
        out.push_back(-1e6 * s);
      }
    }
  }
  return out;
}

// Normal quantiles at evenly spaced probabilities: already well scaled.
std::vector<double> NormalValues(int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(NormalQuantile((i + 0.5) / n));
  return out;
}

// b orders its entries as a does (strictly increasing map).
void ExpectSameOrder(const std::vector<double>& a,
                     const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < a.size(); ++j) {
      if (a[i] < a[j]) EXPECT_LT(b[i], b[j]) << i << " " << j;
    }
  }
}

TEST(PowerWarpTest, WellScaledValuesAreLeftAlone) {
  const std::vector<double> v = NormalValues(40);
  double lambda = 0;
  EXPECT_EQ(PowerWarp(v, &lambda), v);
  EXPECT_EQ(lambda, 1.0);
}

TEST(PowerWarpTest, ValuesSpanningDecadesGetAPowerNearLog) {
  const std::vector<double> v = QuarticBowl();
  double lambda = 1;
  const std::vector<double> w = PowerWarp(v, &lambda);
  EXPECT_LE(lambda, 0.25);
  ExpectSameOrder(v, w);
  for (double x : w) EXPECT_TRUE(std::isfinite(x));
}

TEST(PowerWarpTest, TheBestQuarterOfAConvergedSearchStaysNearlyLinear) {
  // A search converging on the smooth bottom of an objective: gaps to the
  // best value from 1e-4 up, each 1.3x the last (4.5 decades), so a power
  // near log is chosen. Within the best quarter the warp's slope may vary by
  // at most 2x (log: s from the shift c to 2c), so the GP still sees the
  // bottom's own smooth shape, not a funnel narrower than it can resolve.
  std::vector<double> v;
  for (int i = 0; i < 40; ++i) v.push_back(-1e-4 * std::pow(1.3, i));
  double lambda = 1;
  std::vector<double> log_slopes;
  PowerWarp(v, &lambda, &log_slopes);
  ASSERT_LT(lambda, 1.0);
  // v is sorted best first: the best quarter is its first 10 entries.
  const auto [lo, hi] =
      std::minmax_element(log_slopes.begin(), log_slopes.begin() + 10);
  EXPECT_LE(*hi - *lo, std::log(2.0) + 1e-9) << "lambda " << lambda;
}

TEST(PowerWarpTest, ScaleAndShiftOfTheValuesDoNotMatter) {
  std::vector<double> v = QuarticBowl(), scaled;
  for (double x : v) scaled.push_back(1e-3 * x - 5e4);
  double a = -1, b = -1;
  PowerWarp(v, &a);
  PowerWarp(scaled, &b);
  EXPECT_EQ(a, b);
}

TEST(PowerWarpTest, TooFewDistinctValuesAreLeftAlone) {
  double lambda = 0;
  EXPECT_EQ(PowerWarp({1.0, 2.0}, &lambda), std::vector<double>({1.0, 2.0}));
  EXPECT_EQ(lambda, 1.0);
  const std::vector<double> ties = {3.0, 3.0, 1.0, 1.0};
  EXPECT_EQ(PowerWarp(ties, &lambda), ties);
}

TEST(PowerWarpTest, BoxCoxLikelihoodPrefersTheLogOfLogNormalValues) {
  std::vector<double> s;
  for (double z : NormalValues(50)) s.push_back(std::exp(3 * z));
  EXPECT_GT(BoxCoxLogLikelihood(s, 0.0), BoxCoxLogLikelihood(s, 0.5));
  EXPECT_GT(BoxCoxLogLikelihood(s, 0.5), BoxCoxLogLikelihood(s, 1.0));
}

TEST(PowerWarpTest, WarpObjectiveSpreadsTheGoodEndOfASteepBowl) {
  // Without the power warp the best tenth of a quartic bowl's values sits
  // within a sliver of the standardized range (a spike the GP cannot
  // resolve); with it that tenth spans more than twice as much.
  const std::vector<double> v = QuarticBowl();
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(
      v.data(), static_cast<Eigen::Index>(v.size()));
  const std::vector<bool> feasible(v.size(), false);
  auto top_tenth_spread = [&](const Eigen::VectorXd& w) {
    std::vector<double> sorted(w.data(), w.data() + w.size());
    std::sort(sorted.begin(), sorted.end());
    return sorted.back() - sorted[sorted.size() * 9 / 10];
  };
  const Eigen::VectorXd raw = WarpObjective(y, feasible, false);
  const Eigen::VectorXd warped = WarpObjective(y, feasible, true);
  EXPECT_GT(top_tenth_spread(warped), 2 * top_tenth_spread(raw))
      << top_tenth_spread(warped) << " " << top_tenth_spread(raw);
  ExpectSameOrder(
      std::vector<double>(raw.data(), raw.data() + raw.size()),
      std::vector<double>(warped.data(), warped.data() + warped.size()));
}

}  // namespace
}  // namespace cairn::gp
