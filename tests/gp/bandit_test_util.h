// Helpers of the GP bandit tests (gp_bandit_test.cc, the fast unit tests,
// and gp_bandit_quality_test.cc, the whole searches): a continuous space,
// appending observations, and a sequential suggest-evaluate loop.
#ifndef CAIRN_TESTS_GP_BANDIT_TEST_UTIL_H_
#define CAIRN_TESTS_GP_BANDIT_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "Eigen/Core"
#include "gtest/gtest.h"
#include "tuner/gp/gp_bandit.h"

namespace cairn::gp {

// A space of d continuous dimensions.
inline MixedSpace Continuous(int d) {
  return MixedSpace(std::vector<Dimension>(d));
}

// Appends a completed observation (y the first objective's value).
inline void Append(BanditData& data, const Eigen::VectorXd& x, double y,
                   bool infeasible = false) {
  const Eigen::Index n = data.x.rows();
  data.x.conservativeResize(n + 1, x.size());
  data.x.row(n) = x.transpose();
  data.y.conservativeResize(n + 1, 1);
  data.y(n, 0) = y;
  data.infeasible.push_back(infeasible);
  ++data.num_trials;
}

using Objective = std::function<double(const Eigen::VectorXd&)>;

// Runs `budget` sequential suggestions, maximizing f; returns the best value.
inline double RunLoop(GpBandit& bandit, const Objective& f, int budget,
                      uint64_t seed, BanditData* out = nullptr) {
  BanditData data;
  data.x.resize(0, bandit.space().size());
  data.y.resize(0, 1);
  double best = -INFINITY;
  for (int t = 0; t < budget; ++t) {
    auto s = bandit.Suggest(data, 1, seed);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok() || s->empty()) break;
    const double y = f((*s)[0]);
    Append(data, (*s)[0], y);
    best = std::max(best, y);
  }
  if (out != nullptr) *out = data;
  return best;
}

// A bowl whose maximum (0) is at 0.37 in every coordinate.
inline double Sphere(const Eigen::VectorXd& x) {
  const Eigen::VectorXd c = Eigen::VectorXd::Constant(x.size(), 0.37);
  return -(x - c).squaredNorm();
}

}  // namespace cairn::gp

#endif  // CAIRN_TESTS_GP_BANDIT_TEST_UTIL_H_
