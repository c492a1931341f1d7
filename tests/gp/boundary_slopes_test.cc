// Slope covariances of the Matern-5/2 kernel, a GP posterior conditioned on
// observed slopes, and the virtual boundary slopes built from them.
#include "tuner/gp/boundary_slopes.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tuner/gp/derivative_kernel.h"
#include "tuner/gp/gaussian_process.h"

namespace cairn::gp {
namespace {

GpHyperparameters Hyper(std::vector<double> length_scales, double s2,
                        double noise) {
  GpHyperparameters h;
  h.log_length_scales =
      Eigen::Map<Eigen::VectorXd>(
          length_scales.data(), static_cast<Eigen::Index>(length_scales.size()))
          .array()
          .log();
  h.log_signal_variance = std::log(s2);
  h.log_noise_variance = std::log(noise);
  return h;
}

double K(const CategoricalMask& cat, const Eigen::VectorXd& a,
         const Eigen::VectorXd& b, const GpHyperparameters& h) {
  return Matern52(cat, a.transpose(), b.transpose(), h)(0, 0);
}

Eigen::VectorXd Unit(int dims, int d) { return Eigen::VectorXd::Unit(dims, d); }

// Dimensions 0-1 continuous, 2 categorical (enters r only).
const CategoricalMask kCat = {false, false, true};

TEST(DerivativeKernelTest, SlopeValueCovarianceMatchesFiniteDifferences) {
  const GpHyperparameters h = Hyper({0.3, 0.7, 0.5}, 1.7, 1e-3);
  const Eigen::Vector3d s(0.2, 0.6, 1.0);
  Eigen::MatrixXd b(3, 3);
  b << 0.25, 0.5, 1.0,  //
      0.9, 0.1, 0.0,    //
      0.2, 0.6, 1.0;    // At the slope's own point: 0.
  const double eps = 1e-6;
  for (int d : {0, 1}) {
    const Eigen::MatrixXd k = SlopeValueCovariance(kCat, {{s, d}}, b, h);
    for (int i = 0; i < 3; ++i) {
      const Eigen::VectorXd bi = b.row(i).transpose();
      const double fd = (K(kCat, bi, s + eps * Unit(3, d), h) -
                         K(kCat, bi, s - eps * Unit(3, d), h)) /
                        (2 * eps);
      EXPECT_NEAR(k(0, i), fd, 1e-6) << "dim " << d << " row " << i;
    }
  }
}

TEST(DerivativeKernelTest, SlopeSlopeCovarianceMatchesFiniteDifferences) {
  const GpHyperparameters h = Hyper({0.3, 0.7, 0.5}, 1.7, 1e-3);
  const Eigen::Vector3d a(0.2, 0.6, 1.0), c(0.35, 0.4, 0.0);
  const double eps = 1e-4;
  for (int i : {0, 1}) {
    for (int j : {0, 1}) {
      const Eigen::MatrixXd k = SlopeSlopeCovariance(kCat, {{a, i}, {c, j}}, h);
      const Eigen::VectorXd ei = eps * Unit(3, i), ej = eps * Unit(3, j);
      const double fd =
          (K(kCat, a + ei, c + ej, h) - K(kCat, a + ei, c - ej, h) -
           K(kCat, a - ei, c + ej, h) + K(kCat, a - ei, c - ej, h)) /
          (4 * eps * eps);
      EXPECT_NEAR(k(0, 1), fd, 1e-4 * std::abs(fd) + 1e-6) << i << j;
      EXPECT_NEAR(k(0, 1), k(1, 0), 1e-12);
    }
    // At r = 0: the slope's prior variance.
    const Eigen::MatrixXd self = SlopeSlopeCovariance(kCat, {{a, i}}, h);
    EXPECT_NEAR(std::sqrt(self(0, 0)), SlopePriorSd(h, i), 1e-12);
  }
}

TEST(GaussianProcessSlopesTest, PosteriorReproducesAnObservedSlope) {
  // One value (0 at 0.5) and a slope of -2 at 0.9 with tiny noise: the
  // posterior mean's derivative at 0.9 is -2, and the mean falls past it.
  const GpHyperparameters h = Hyper({0.4}, 1.0, 1e-6);
  Eigen::MatrixXd x(1, 1);
  x << 0.5;
  auto gp = GaussianProcess::Create({false}, x, Eigen::VectorXd::Zero(1), h);
  ASSERT_TRUE(gp.ok());
  SlopeObservations slope;
  slope.points.push_back({Eigen::VectorXd::Constant(1, 0.9), 0});
  slope.values.push_back(-2.0);
  slope.noise_variances.push_back(1e-8);
  auto bent = gp->WithSlopes(slope);
  ASSERT_TRUE(bent.ok()) << bent.status();
  EXPECT_EQ(bent->num_slopes(), 1);
  Eigen::MatrixXd q(3, 1);
  q << 0.9 - 1e-5, 0.9 + 1e-5, 0.5;
  Eigen::VectorXd mu, var;
  bent->Predict(q, &mu, &var);
  EXPECT_NEAR((mu[1] - mu[0]) / 2e-5, -2.0, 1e-3);
  EXPECT_NEAR(mu[2], 0.0, 1e-4);  // The observed value still holds.
  gp->Predict(q, &mu, nullptr);   // Without the slope: flat past 0.9.
  EXPECT_NEAR((mu[1] - mu[0]) / 2e-5, 0.0, 0.2);
}

TEST(GaussianProcessSlopesTest, PendingPointsSurviveAndBadSlopesAreRefused) {
  const GpHyperparameters h = Hyper({0.3, 0.3}, 1.0, 1e-4);
  Eigen::MatrixXd x(2, 2);
  x << 0.2, 0.2, 0.8, 0.5;
  auto gp =
      GaussianProcess::Create({false, false}, x, Eigen::Vector2d(1.0, -1.0), h);
  ASSERT_TRUE(gp.ok());
  Eigen::MatrixXd pending(1, 2);
  pending << 0.5, 0.9;
  ASSERT_TRUE(gp->AddPendingPoints(pending).ok());
  SlopeObservations slope;
  slope.points.push_back({Eigen::Vector2d(0.0, 0.2), 0});
  slope.values.push_back(1.0);
  slope.noise_variances.push_back(0.1);
  auto bent = gp->WithSlopes(slope);
  ASSERT_TRUE(bent.ok()) << bent.status();
  EXPECT_EQ(bent->num_points(), 3);
  Eigen::VectorXd var;
  bent->Predict(pending, nullptr, &var);
  EXPECT_LT(var[0], 1e-3);  // Still conditioned on the pending point.
  // A pending point added after the slopes is conditioned on as well.
  Eigen::MatrixXd later(1, 2);
  later << 0.1, 0.9;
  ASSERT_TRUE(bent->AddPendingPoints(later).ok());
  bent->Predict(later, nullptr, &var);
  EXPECT_LT(var[0], 1e-3);

  SlopeObservations bad = slope;
  bad.noise_variances[0] = 0.0;
  EXPECT_EQ(gp->WithSlopes(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = slope;
  bad.points[0].dim = 2;
  EXPECT_EQ(gp->WithSlopes(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = slope;
  bad.values.clear();
  EXPECT_EQ(gp->WithSlopes(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BoundarySlopesTest, FacesOfContinuousDimensionsAndLargeGridsOnly) {
  std::vector<Dimension> dims(4);
  dims[1].grid = {0.0, 0.25, 0.5, 0.75, 1.0};  // A few integers: no faces.
  for (int i = 0; i <= 20; ++i) dims[2].grid.push_back(i / 20.0);
  dims[3].kind = Dimension::Kind::kCategorical;
  dims[3].num_categories = 2;
  const MixedSpace space(dims);
  const Eigen::Vector4d x(0.995, 0.0, 0.0, 1.0);
  const std::vector<Face> faces = BoundaryFaces(space, x, 0.01);
  ASSERT_EQ(faces.size(), 2u);
  EXPECT_EQ(faces[0].dim, 0);
  EXPECT_TRUE(faces[0].upper);
  EXPECT_EQ(faces[1].dim, 2);
  EXPECT_FALSE(faces[1].upper);
  EXPECT_TRUE(
      BoundaryFaces(space, Eigen::Vector4d(0.5, 0, 0.5, 0), 0.01).empty());
}

TEST(BoundarySlopesTest, SlopesPointInwardAtTheProjection) {
  const GpHyperparameters h = Hyper({0.5, 2.0}, 1.0, 1e-3);
  const Eigen::Vector2d x(0.993, 0.004);
  const SlopeObservations s = BoundarySlopes(h, x, {{0, true}, {1, false}});
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].x, Eigen::Vector2d(1.0, 0.004));
  EXPECT_EQ(s.points[1].x, Eigen::Vector2d(0.993, 0.0));
  // Maximized outputs fall towards the faces: negative at an upper face,
  // positive at a lower one, one prior sd each, give or take as much.
  EXPECT_DOUBLE_EQ(s.values[0], -SlopePriorSd(h, 0));
  EXPECT_DOUBLE_EQ(s.values[1], SlopePriorSd(h, 1));
  EXPECT_DOUBLE_EQ(s.noise_variances[1], s.values[1] * s.values[1]);
}

}  // namespace
}  // namespace cairn::gp
