// Matern-5/2 covariances with partial derivatives (see the header).
#include "tuner/gp/derivative_kernel.h"

#include <cmath>

namespace cairn::gp {
namespace {

constexpr double kSqrt5 = 2.23606797749978969640;

// Scaled squared distance between a and b (the kernel's r^2).
template <typename A, typename B>
double R2(const CategoricalMask& categorical, const A& a, const B& b,
          const Eigen::VectorXd& inv_l2) {
  double r2 = 0.0;
  for (Eigen::Index d = 0; d < a.size(); ++d) {
    if (categorical[d]) {
      if (a[d] != b[d]) r2 += inv_l2[d];
    } else {
      const double diff = a[d] - b[d];
      r2 += diff * diff * inv_l2[d];
    }
  }
  return r2;
}

Eigen::VectorXd InverseSquaredLengthScales(const GpHyperparameters& h) {
  return (-2.0 * h.log_length_scales.array()).exp().matrix();
}

}  // namespace

Eigen::MatrixXd SlopeValueCovariance(const CategoricalMask& categorical,
                                     const std::vector<SlopePoint>& slopes,
                                     const Eigen::MatrixXd& b,
                                     const GpHyperparameters& h) {
  const Eigen::VectorXd inv_l2 = InverseSquaredLengthScales(h);
  const double c = std::exp(h.log_signal_variance) * 5.0 / 3.0;
  Eigen::MatrixXd k(static_cast<Eigen::Index>(slopes.size()), b.rows());
  for (size_t j = 0; j < slopes.size(); ++j) {
    const SlopePoint& s = slopes[j];
    for (Eigen::Index i = 0; i < b.rows(); ++i) {
      const double r = std::sqrt(R2(categorical, s.x, b.row(i), inv_l2));
      // cov(f(b_i), df(s)/ds_d) = s2 5/3 g(r) (b_d - s_d) / l_d^2.
      k(j, i) = c * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r) *
                (b(i, s.dim) - s.x[s.dim]) * inv_l2[s.dim];
    }
  }
  return k;
}

Eigen::MatrixXd SlopeSlopeCovariance(const CategoricalMask& categorical,
                                     const std::vector<SlopePoint>& slopes,
                                     const GpHyperparameters& h) {
  const Eigen::VectorXd inv_l2 = InverseSquaredLengthScales(h);
  const double c = std::exp(h.log_signal_variance) * 5.0 / 3.0;
  const Eigen::Index v = static_cast<Eigen::Index>(slopes.size());
  Eigen::MatrixXd k(v, v);
  for (Eigen::Index j = 0; j < v; ++j) {
    for (Eigen::Index m = 0; m < v; ++m) {
      const SlopePoint& a = slopes[j];
      const SlopePoint& b = slopes[m];
      const double r = std::sqrt(R2(categorical, a.x, b.x, inv_l2));
      const double e = std::exp(-kSqrt5 * r);
      double value = -5.0 * e * (a.x[a.dim] - b.x[a.dim]) * inv_l2[a.dim] *
                     (a.x[b.dim] - b.x[b.dim]) * inv_l2[b.dim];
      if (a.dim == b.dim) value += (1.0 + kSqrt5 * r) * e * inv_l2[a.dim];
      k(j, m) = c * value;
    }
  }
  return k;
}

double SlopePriorSd(const GpHyperparameters& h, int dim) {
  return std::sqrt(std::exp(h.log_signal_variance) * 5.0 / 3.0) /
         std::exp(h.log_length_scales[dim]);
}

}  // namespace cairn::gp
