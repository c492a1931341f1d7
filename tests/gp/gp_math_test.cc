// GP math against closed-form cases: kernel values, interpolation, variance,
// marginal-likelihood gradient, Cholesky fallbacks, output warping, the
// mixed-space helpers and the acquisition optimizer.
#include <cmath>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner/gp/acquisition_optimizer.h"
#include "tuner/gp/gaussian_process.h"
#include "tuner/gp/mixed_space.h"
#include "tuner/gp/output_warping.h"

namespace cairn::gp {
namespace {

GpHyperparameters Hyper(std::vector<double> log_l, double log_s2,
                        double log_noise) {
  GpHyperparameters h;
  h.log_length_scales = Eigen::Map<Eigen::VectorXd>(log_l.data(), log_l.size());
  h.log_signal_variance = log_s2;
  h.log_noise_variance = log_noise;
  return h;
}

Eigen::MatrixXd RandomPoints(int n, int d, Rng& rng) {
  Eigen::MatrixXd x(n, d);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) x(i, j) = rng.Uniform();
  }
  return x;
}

TEST(KernelTest, MatchesClosedForm) {
  const GpHyperparameters h =
      Hyper({std::log(0.5), std::log(2.0)}, std::log(1.5), -10);
  Eigen::MatrixXd a(1, 2), b(1, 2);
  a << 0.1, 0.2;
  b << 0.4, 0.9;
  const double r = std::sqrt(std::pow(0.3 / 0.5, 2) + std::pow(0.7 / 2.0, 2));
  const double expected = 1.5 * (1 + std::sqrt(5.0) * r + 5.0 / 3 * r * r) *
                          std::exp(-std::sqrt(5.0) * r);
  EXPECT_NEAR(Matern52({false, false}, a, b, h)(0, 0), expected, 1e-12);
  EXPECT_NEAR(Matern52({false, false}, a, a, h)(0, 0), 1.5, 1e-12);
}

TEST(KernelTest, CategoricalOverlapDistance) {
  const GpHyperparameters h = Hyper({std::log(0.5), std::log(0.7)}, 0, -10);
  Eigen::MatrixXd a(3, 2);
  a << 0.2, 0, 0.2, 1, 0.2, 2;
  const Eigen::MatrixXd k = Matern52({false, true}, a, a, h);
  const double r = 1.0 / 0.7;
  const double expected = (1 + std::sqrt(5.0) * r + 5.0 / 3 * r * r) *
                          std::exp(-std::sqrt(5.0) * r);
  // Any two different categories are equally far apart.
  EXPECT_NEAR(k(0, 1), expected, 1e-12);
  EXPECT_NEAR(k(0, 2), expected, 1e-12);
  EXPECT_NEAR(k(1, 2), expected, 1e-12);
}

TEST(GaussianProcessTest, PosteriorMeanInterpolatesNoiselessData) {
  Rng rng(1);
  const Eigen::MatrixXd x = RandomPoints(15, 2, rng);
  Eigen::VectorXd y(15);
  for (int i = 0; i < 15; ++i) {
    y[i] = std::sin(6 * x(i, 0)) + x(i, 1) * x(i, 1);
  }
  auto gp = GaussianProcess::Create(
      {false, false}, x, y, Hyper({std::log(0.3), std::log(0.3)}, 0, -25));
  ASSERT_TRUE(gp.ok()) << gp.status();
  Eigen::VectorXd mean, var;
  gp->Predict(x, &mean, &var);
  EXPECT_LT((mean - y).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT(var.maxCoeff(), 1e-6);
}

TEST(GaussianProcessTest, VarianceShrinksAtObservedPointsAndGrowsAway) {
  Eigen::MatrixXd x(2, 1);
  x << 0.2, 0.8;
  Eigen::VectorXd y(2);
  y << 1.0, -1.0;
  auto gp = GaussianProcess::Create({false}, x, y,
                                    Hyper({std::log(0.2)}, 0, std::log(1e-4)));
  ASSERT_TRUE(gp.ok()) << gp.status();
  Eigen::MatrixXd q(4, 1);
  q << 0.2, 0.3, 0.5, 5.0;
  Eigen::VectorXd mean, var;
  gp->Predict(q, &mean, &var);
  EXPECT_LT(var[0], 2e-4);
  EXPECT_LT(var[0], var[1]);
  EXPECT_LT(var[1], var[2]);
  // Far from the data the prior comes back: mean 0, variance s2 = 1.
  EXPECT_NEAR(var[3], 1.0, 1e-9);
  EXPECT_NEAR(mean[3], 0.0, 1e-9);
}

TEST(GaussianProcessTest, PendingPointsShrinkVarianceButNotMean) {
  Eigen::MatrixXd x(2, 1);
  x << 0.1, 0.9;
  Eigen::VectorXd y(2);
  y << 0.5, 1.0;
  auto gp = GaussianProcess::Create({false}, x, y,
                                    Hyper({std::log(0.3)}, 0, std::log(1e-6)));
  ASSERT_TRUE(gp.ok());
  Eigen::MatrixXd q(1, 1);
  q << 0.5;
  Eigen::VectorXd m0, v0, m1, v1;
  gp->Predict(q, &m0, &v0);
  ASSERT_TRUE(gp->AddPendingPoints(q).ok());
  gp->Predict(q, &m1, &v1);
  EXPECT_NEAR(m0[0], m1[0], 1e-12);
  EXPECT_LT(v1[0], 1e-5);
  EXPECT_GT(v0[0], 0.1);
  // The incremental factor equals a fresh factorization over all points.
  Eigen::MatrixXd all(3, 1);
  all << 0.1, 0.9, 0.5;
  Eigen::VectorXd zeros = Eigen::VectorXd::Zero(3);
  auto fresh =
      GaussianProcess::Create({false}, all, zeros, gp->hyperparameters());
  ASSERT_TRUE(fresh.ok());
  Eigen::MatrixXd probe(3, 1);
  probe << 0.3, 0.7, 0.05;
  Eigen::VectorXd va, vb;
  gp->Predict(probe, nullptr, &va);
  fresh->Predict(probe, nullptr, &vb);
  EXPECT_LT((va - vb).cwiseAbs().maxCoeff(), 1e-9);
  // A duplicate of a pending point still conditions without failing.
  EXPECT_TRUE(gp->AddPendingPoints(q).ok());
}

TEST(GaussianProcessTest, LmlGradientMatchesFiniteDifferences) {
  Rng rng(3);
  const int n = 12;
  Eigen::MatrixXd x = RandomPoints(n, 3, rng);
  for (int i = 0; i < n; ++i) x(i, 2) = i % 3;  // A categorical column.
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    y[i] = std::cos(4 * x(i, 0)) - x(i, 1) + 0.3 * x(i, 2);
  }
  const CategoricalMask mask = {false, false, true};
  const GpHyperparameters h = Hyper({-1.0, 0.3, -0.5}, 0.2, -3.0);
  Eigen::VectorXd grad;
  auto lml = LogMarginalLikelihood(mask, x, y, h, &grad);
  ASSERT_TRUE(lml.ok()) << lml.status();
  const Eigen::VectorXd theta = h.Pack();
  for (int j = 0; j < theta.size(); ++j) {
    const double eps = 1e-5;
    Eigen::VectorXd tp = theta, tm = theta;
    tp[j] += eps;
    tm[j] -= eps;
    const double fp =
        *LogMarginalLikelihood(mask, x, y, GpHyperparameters::Unpack(tp));
    const double fm =
        *LogMarginalLikelihood(mask, x, y, GpHyperparameters::Unpack(tm));
    const double fd = (fp - fm) / (2 * eps);
    EXPECT_NEAR(grad[j], fd, 1e-5 * std::max(1.0, std::abs(fd)))
        << "parameter " << j;
  }
  // The prior's gradient too.
  GpPriorOptions prior;
  Eigen::VectorXd pgrad;
  LogPrior(prior, h, &pgrad);
  for (int j = 0; j < theta.size(); ++j) {
    Eigen::VectorXd tp = theta, tm = theta;
    tp[j] += 1e-6;
    tm[j] -= 1e-6;
    const double fd = (LogPrior(prior, GpHyperparameters::Unpack(tp)) -
                       LogPrior(prior, GpHyperparameters::Unpack(tm))) /
                      2e-6;
    EXPECT_NEAR(pgrad[j], fd, 1e-6);
  }
}

TEST(GaussianProcessTest, FitImprovesPosteriorAndFindsIrrelevantDimension) {
  Rng rng(5);
  const int n = 30;
  const Eigen::MatrixXd x = RandomPoints(n, 2, rng);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) y[i] = std::sin(5 * x(i, 0));  // x1 unused.
  y = (y.array() - y.mean()) /
      std::sqrt((y.array() - y.mean()).square().mean());
  GpFitOptions options;
  auto h = FitHyperparameters({false, false}, x, y, options, 11);
  ASSERT_TRUE(h.ok()) << h.status();
  const GpHyperparameters start = PriorMode(options.prior, 2);
  const double fitted = *LogMarginalLikelihood({false, false}, x, y, *h) +
                        LogPrior(options.prior, *h);
  const double initial = *LogMarginalLikelihood({false, false}, x, y, start) +
                         LogPrior(options.prior, start);
  EXPECT_GT(fitted, initial);
  EXPECT_GT(h->log_length_scales[1], h->log_length_scales[0] + 1.0);
  // Deterministic for a seed.
  auto again = FitHyperparameters({false, false}, x, y, options, 11);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Pack(), h->Pack());
}

TEST(CholeskyTest, SingularMatrixGetsJitterAndNanIsAnError) {
  Eigen::MatrixXd k = Eigen::MatrixXd::Ones(4, 4);  // Rank one.
  double jitter = 0.0;
  auto l = CholeskyWithJitter(k, &jitter);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_GT(jitter, 0.0);
  EXPECT_LT(((*l) * l->transpose() - k).cwiseAbs().maxCoeff(), 1e-2);
  Eigen::MatrixXd bad = Eigen::MatrixXd::Identity(3, 3);
  bad(1, 1) = NAN;
  EXPECT_EQ(CholeskyWithJitter(bad).status().code(),
            absl::StatusCode::kFailedPrecondition);
  Eigen::MatrixXd negative = -Eigen::MatrixXd::Identity(3, 3);
  EXPECT_EQ(CholeskyWithJitter(negative).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A GP on duplicated noiseless points still builds.
  Eigen::MatrixXd x(3, 1);
  x << 0.5, 0.5, 0.5;
  Eigen::VectorXd y(3);
  y << 1, 1, 1;
  EXPECT_TRUE(
      GaussianProcess::Create({false}, x, y, Hyper({0.0}, 0.0, std::log(1e-12)))
          .ok());
}

TEST(OutputWarpingTest, MonotoneRobustAndImputesInfeasible) {
  Eigen::VectorXd v(7);
  v << 1.0, 2.0, 3.0, 4.0, 5.0, -1e6, 0.0;
  std::vector<bool> infeasible = {false, false, false, false,
                                  false, false, true};
  const Eigen::VectorXd w = WarpObjective(v, infeasible);
  // Order of feasible values preserved.
  EXPECT_LT(w[5], w[0]);
  for (int i = 0; i < 4; ++i) EXPECT_LT(w[i], w[i + 1]);
  // The outlier is compressed: the good values keep a useful spread.
  EXPECT_GT(w[4] - w[3], 0.3);
  EXPECT_GT(w[5], -4.0);
  // Infeasible below every feasible value.
  EXPECT_LT(w[6], w.head(6).minCoeff());
  // Feasible values are standardized.
  EXPECT_NEAR(w.head(6).mean(), 0.0, 1e-12);
  // No feasible value at all: flat.
  EXPECT_EQ(WarpObjective(Eigen::VectorXd::Ones(2), {true, true}),
            Eigen::VectorXd::Zero(2));
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306167813, 1e-9);
}

// A space with a continuous dim, an integer grid, a categorical parent and a
// continuous child active only under category 2.
MixedSpace TestSpace() {
  std::vector<Dimension> dims(4);
  dims[0].kind = Dimension::Kind::kContinuous;
  dims[1].kind = Dimension::Kind::kContinuous;
  for (int i = 0; i <= 10; ++i) dims[1].grid.push_back(i / 10.0);
  dims[2].kind = Dimension::Kind::kCategorical;
  dims[2].num_categories = 3;
  dims[3].kind = Dimension::Kind::kContinuous;
  dims[3].parent = 2;
  dims[3].parent_values = {2.0};
  EXPECT_TRUE(MixedSpace::Validate(dims).ok());
  return MixedSpace(dims);
}

TEST(MixedSpaceTest, ValidateNamesTheProblem) {
  std::vector<Dimension> dims(2);
  dims[1].parent = 1;
  dims[1].parent_values = {0.0};
  absl::Status s = MixedSpace::Validate(dims);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("dimension 1"));
  dims[1].parent = -1;
  dims[0].grid = {0.5, 0.2};
  EXPECT_EQ(MixedSpace::Validate(dims).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MixedSpaceTest, CanonicalizeSnapsAndMasksInactiveChildren) {
  const MixedSpace space = TestSpace();
  Eigen::VectorXd x(4);
  x << 1.7, 0.34, 0.6, 0.9;
  space.Canonicalize(x);
  EXPECT_DOUBLE_EQ(x[0], 1.0);
  EXPECT_DOUBLE_EQ(x[1], 0.3);
  EXPECT_DOUBLE_EQ(x[2], 1.0);
  EXPECT_DOUBLE_EQ(x[3], kInactiveContinuous);  // Parent is category 1.
  EXPECT_FALSE(space.IsActive(x, 3));
  x[2] = 2;
  x[3] = 0.9;
  space.Canonicalize(x);
  EXPECT_DOUBLE_EQ(x[3], 0.9);
  EXPECT_TRUE(space.IsActive(x, 3));
  // Halton: index 0 is the center; points are canonical and distinct.
  EXPECT_DOUBLE_EQ(space.Halton(0, 1)[0], 0.5);
  std::set<std::vector<double>> seen;
  for (int i = 1; i < 50; ++i) {
    Eigen::VectorXd h = space.Halton(i, 1);
    Eigen::VectorXd c = h;
    space.Canonicalize(c);
    EXPECT_EQ(h, c);
    seen.insert(std::vector<double>(h.data(), h.data() + h.size()));
  }
  EXPECT_EQ(seen.size(), 49u);
}

TEST(AcquisitionOptimizerTest, StaysInMixedSpaceAndFindsKnownOptimum) {
  const MixedSpace space = TestSpace();
  // Maximum 0 at x0 = 0.3, grid value 0.7, category 2, child 0.8.
  auto f = [](const Eigen::VectorXd& x) {
    double v = -std::pow(x[0] - 0.3, 2) - std::pow(x[1] - 0.7, 2);
    v -= (x[2] == 2.0) ? std::pow(x[3] - 0.8, 2) : 0.5;
    return v;
  };
  int calls = 0;
  bool all_canonical = true;
  BatchScoreFn score = [&](const Eigen::MatrixXd& c, Eigen::VectorXd* s) {
    s->resize(c.rows());
    for (Eigen::Index i = 0; i < c.rows(); ++i) {
      Eigen::VectorXd x = c.row(i).transpose();
      Eigen::VectorXd canon = x;
      space.Canonicalize(canon);
      if (canon != x) all_canonical = false;
      (*s)[i] = f(x);
      ++calls;
    }
  };
  Rng rng(9);
  AcquisitionOptimizerOptions options;
  options.max_evaluations = 3000;
  AcquisitionResult r =
      MaximizeAcquisition(space, score, Eigen::MatrixXd(0, 4),
                          Eigen::MatrixXd(0, 4), INFINITY, options, rng);
  ASSERT_EQ(r.x.size(), 4);
  EXPECT_TRUE(all_canonical);
  EXPECT_LE(calls, options.max_evaluations + options.population);
  EXPECT_EQ(r.x[2], 2.0);
  EXPECT_DOUBLE_EQ(r.x[1], 0.7);
  EXPECT_NEAR(r.x[0], 0.3, 0.01);
  EXPECT_NEAR(r.x[3], 0.8, 0.01);
  EXPECT_GT(r.score, -2e-4);
}

TEST(AcquisitionOptimizerTest, RespectsForbiddenPointsAndTrustRegionSampling) {
  // A 1-D integer space with 3 values, the best one forbidden.
  std::vector<Dimension> dims(1);
  dims[0].grid = {0.0, 0.5, 1.0};
  const MixedSpace space(dims);
  BatchScoreFn score = [](const Eigen::MatrixXd& c, Eigen::VectorXd* s) {
    s->resize(c.rows());
    for (Eigen::Index i = 0; i < c.rows(); ++i) {
      (*s)[i] = c(i, 0) == 1.0 ? -INFINITY : c(i, 0);
    }
  };
  Rng rng(2);
  AcquisitionResult r =
      MaximizeAcquisition(space, score, Eigen::MatrixXd(0, 1),
                          Eigen::MatrixXd(0, 1), INFINITY, {}, rng);
  ASSERT_EQ(r.x.size(), 1);
  EXPECT_EQ(r.x[0], 0.5);
  // Everything forbidden: no result.
  BatchScoreFn none = [](const Eigen::MatrixXd& c, Eigen::VectorXd* s) {
    *s = Eigen::VectorXd::Constant(c.rows(), -INFINITY);
  };
  EXPECT_EQ(MaximizeAcquisition(space, none, Eigen::MatrixXd(0, 1),
                                Eigen::MatrixXd(0, 1), INFINITY, {}, rng)
                .x.size(),
            0);
  EXPECT_NEAR(TrustRegionRadius(0, 2), 0.2, 1e-12);
  EXPECT_NEAR(TrustRegionRadius(10, 2), 0.4, 1e-12);
  EXPECT_TRUE(std::isinf(TrustRegionRadius(100, 2)));
}

}  // namespace
}  // namespace cairn::gp
