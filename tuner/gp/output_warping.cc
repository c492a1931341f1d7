// Half-rank output warping, standardization and infeasible imputation.
#include "tuner/gp/output_warping.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "tuner/gp/power_warp.h"

namespace cairn::gp {

double NormalQuantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1.0 - 1e-16);
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - plow) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
        q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step against the exact CDF.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

Eigen::VectorXd WarpObjective(const Eigen::VectorXd& values,
                              const std::vector<bool>& infeasible,
                              bool power_warp, Eigen::VectorXd* log_slopes) {
  const Eigen::Index n = values.size();
  std::vector<Eigen::Index> feasible;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!infeasible[i] && std::isfinite(values[i])) feasible.push_back(i);
  }
  Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
  if (log_slopes != nullptr) *log_slopes = Eigen::VectorXd::Constant(n, NAN);
  if (feasible.empty()) return out;
  const size_t nf = feasible.size();
  std::vector<double> powered(nf);
  for (size_t k = 0; k < nf; ++k) powered[k] = values[feasible[k]];
  std::vector<double> power_slopes(nf, 0.0);
  if (power_warp) powered = PowerWarp(powered, nullptr, &power_slopes);
  std::vector<double> sorted = powered;
  std::sort(sorted.begin(), sorted.end());
  const double median = (nf % 2 == 1)
                            ? sorted[nf / 2]
                            : 0.5 * (sorted[nf / 2 - 1] + sorted[nf / 2]);
  // Spread of the good half, as the RMS deviation above the median.
  double ss = 0.0;
  int good = 0;
  for (double v : sorted) {
    if (v >= median) {
      ss += (v - median) * (v - median);
      ++good;
    }
  }
  double spread = good > 0 ? std::sqrt(ss / good) : 0.0;
  if (!(spread > 0.0)) spread = 1.0;
  Eigen::VectorXd warped(nf);
  std::vector<bool> kept(nf, true);
  for (size_t k = 0; k < nf; ++k) {
    const double v = powered[k];
    if (v >= median) {
      warped[k] = v;
      continue;
    }
    // Mid-rank of v among all feasible values (ties share a rank).
    const double lo =
        std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
    const double hi =
        std::upper_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
    const double rank = 0.5 * (lo + hi);  // In (0, nf).
    const double q = NormalQuantile(rank / nf);
    // Only ever lifts bad values (compresses the tail), so a mildly bad
    // value keeps its place and an outlier cannot dominate the scale.
    warped[k] = std::max(median + spread * q, v);
    kept[k] = warped[k] == v;
  }
  const double mean = warped.mean();
  double sd = std::sqrt((warped.array() - mean).square().mean());
  if (!(sd > 1e-12)) sd = 1.0;
  warped = (warped.array() - mean) / sd;
  if (log_slopes != nullptr) {
    for (size_t k = 0; k < nf; ++k) {
      if (kept[k]) (*log_slopes)[feasible[k]] = power_slopes[k] - std::log(sd);
    }
  }
  for (size_t k = 0; k < nf; ++k) out[feasible[k]] = warped[k];
  const double worst = warped.minCoeff() - 0.5;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (infeasible[i] || !std::isfinite(values[i])) out[i] = worst;
  }
  return out;
}

}  // namespace cairn::gp
