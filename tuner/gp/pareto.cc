// Pareto front, exact 2-D hypervolume and hypervolume scalarizations.
#include "tuner/gp/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace cairn::gp {

std::vector<int> ParetoFrontIndices(const Eigen::MatrixXd& points) {
  const int n = static_cast<int>(points.rows());
  std::vector<int> front;
  for (int i = 0; i < n; ++i) {
    if (!points.row(i).allFinite()) continue;
    bool dominated = false;
    for (int j = 0; j < n && !dominated; ++j) {
      if (j == i || !points.row(j).allFinite()) continue;
      dominated = (points.row(j).array() >= points.row(i).array()).all() &&
                  (points.row(j).array() > points.row(i).array()).any();
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

double Hypervolume2D(const Eigen::MatrixXd& points,
                     const Eigen::Vector2d& reference) {
  std::vector<std::pair<double, double>> p;
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    const double a = points(i, 0), b = points(i, 1);
    if (std::isfinite(a) && std::isfinite(b) && a > reference[0] &&
        b > reference[1]) {
      p.emplace_back(a, b);
    }
  }
  // Sweep by decreasing first coordinate; each point adds the strip between
  // its second coordinate and the highest one seen so far.
  std::sort(p.begin(), p.end(), [](const auto& u, const auto& v) {
    return u.first > v.first || (u.first == v.first && u.second > v.second);
  });
  double volume = 0.0, best_second = reference[1];
  for (const auto& [a, b] : p) {
    if (b > best_second) {
      volume += (a - reference[0]) * (b - best_second);
      best_second = b;
    }
  }
  return volume;
}

Eigen::MatrixXd RandomScalarizationWeights(int num_weights, int num_objectives,
                                           Rng& rng) {
  Eigen::MatrixXd w(num_weights, num_objectives);
  for (int k = 0; k < num_weights; ++k) {
    for (int i = 0; i < num_objectives; ++i) {
      w(k, i) = std::abs(rng.Normal()) + 1e-12;
    }
    w.row(k) /= w.row(k).norm();
  }
  return w;
}

double HypervolumeScalarization(const Eigen::VectorXd& y,
                                const Eigen::VectorXd& reference,
                                const Eigen::VectorXd& weight) {
  double s = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    s = std::min(s, std::max(0.0, y[i] - reference[i]) / weight[i]);
  }
  return std::pow(s, static_cast<double>(y.size()));
}

}  // namespace cairn::gp
