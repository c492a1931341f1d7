// Pareto front, 2-D hypervolume and scalarizations on hand-computed cases.
#include "tuner/gp/pareto.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn::gp {
namespace {

using ::testing::ElementsAre;

TEST(ParetoTest, FrontOfHandMadeSet) {
  Eigen::MatrixXd p(6, 2);
  p << 1, 5,  // front
      2, 4,   // front
      2, 3,   // dominated by (2,4)
      4, 1,   // front
      3, 1,   // dominated by (4,1)
      2, 4;   // duplicate of a front point: kept
  EXPECT_THAT(ParetoFrontIndices(p), ElementsAre(0, 1, 3, 5));
}

TEST(ParetoTest, NonFiniteRowsAreNeverOnTheFront) {
  Eigen::MatrixXd p(3, 2);
  p << 1, 1, NAN, 9, 0, 2;
  EXPECT_THAT(ParetoFrontIndices(p), ElementsAre(0, 2));
}

TEST(ParetoTest, ThreeObjectives) {
  Eigen::MatrixXd p(4, 3);
  p << 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5;
  EXPECT_THAT(ParetoFrontIndices(p), ElementsAre(0, 1, 2));
}

TEST(HypervolumeTest, HandComputedStaircase) {
  Eigen::MatrixXd p(3, 2);
  p << 1, 3, 2, 2, 3, 1;
  // Reference (0,0): 3*1 + 2*1 + 1*1 = 6.
  EXPECT_DOUBLE_EQ(Hypervolume2D(p, Eigen::Vector2d(0, 0)), 6.0);
  // Dominated and out-of-reference points change nothing.
  Eigen::MatrixXd q(5, 2);
  q << 1, 3, 2, 2, 3, 1, 1, 1, -1, 10;
  EXPECT_DOUBLE_EQ(Hypervolume2D(q, Eigen::Vector2d(0, 0)), 6.0);
  // Shifted reference: (3-0.5)*(1-0.5) + (2-0.5)*1 + (1-0.5)*1 = 3.25.
  EXPECT_DOUBLE_EQ(Hypervolume2D(p, Eigen::Vector2d(0.5, 0.5)), 3.25);
  EXPECT_DOUBLE_EQ(Hypervolume2D(Eigen::MatrixXd(0, 2), Eigen::Vector2d(0, 0)),
                   0.0);
}

TEST(HypervolumeTest, ScalarizationAverageApproximatesHypervolume) {
  // HV of a set = c_m * E_w[max_y s_w(y)] with c_2 = pi/4 for weights on the
  // positive quarter circle (Golovin & Zhang 2020, Lemma 5).
  Eigen::MatrixXd p(3, 2);
  p << 1, 3, 2, 2, 3, 1;
  Rng rng(7);
  const int k = 20000;
  Eigen::MatrixXd w = RandomScalarizationWeights(k, 2, rng);
  double mean = 0.0;
  for (int i = 0; i < k; ++i) {
    double best = 0.0;
    for (int j = 0; j < 3; ++j) {
      best = std::max(best, HypervolumeScalarization(p.row(j).transpose(),
                                                     Eigen::Vector2d(0, 0),
                                                     w.row(i).transpose()));
    }
    mean += best / k;
  }
  EXPECT_NEAR(M_PI / 4 * mean, 6.0, 0.15);
}

TEST(HypervolumeTest, ScalarizationIsZeroBelowReference) {
  EXPECT_EQ(
      HypervolumeScalarization(Eigen::Vector2d(-1, 5), Eigen::Vector2d(0, 0),
                               Eigen::Vector2d(0.6, 0.8)),
      0.0);
  EXPECT_NEAR(
      HypervolumeScalarization(Eigen::Vector2d(3, 4), Eigen::Vector2d(0, 0),
                               Eigen::Vector2d(0.6, 0.8)),
      25.0, 1e-9);
}

}  // namespace
}  // namespace cairn::gp
