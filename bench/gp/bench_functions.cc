// gp_bench.py's test functions; each mirrors the Python expression term by
// term (pow where Python has **, sums in Python's order).
#include "bench/gp/bench_functions.h"

#include <algorithm>
#include <cmath>

namespace cairn::gp_bench {
namespace {

double Sum(const std::vector<double>& terms) {
  double s = 0.0;
  for (double t : terms) s += t;
  return s;
}

std::vector<double> Shifted(const std::vector<double>& x,
                            const std::vector<double>& offsets) {
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); ++i) d[i] = x[i] - offsets[i];
  return d;
}

double Rastrigin(const std::vector<double>& x) {
  std::vector<double> t;
  for (double v : x) t.push_back(v * v - 10 * std::cos(2 * M_PI * v));
  return 10.0 * static_cast<double>(x.size()) + Sum(t);
}

double Michalewicz(const std::vector<double>& x) {
  std::vector<double> t;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    t.push_back(std::sin(v) *
                std::pow(std::sin((i + 1.0) * v * v / M_PI), 20.0));
  }
  return -Sum(t);
}

// ill_scaled.py's bowls (f* = 0 at `offsets`).
Objective PowerBowl(double power, std::vector<double> offsets,
                    std::vector<double> weights = {}) {
  if (weights.empty()) weights.assign(offsets.size(), 1.0);
  return [=](const std::vector<double>& x) {
    const std::vector<double> d = Shifted(x, offsets);
    std::vector<double> t;
    for (size_t i = 0; i < d.size(); ++i) {
      t.push_back(weights[i] * std::pow(d[i], power));
    }
    return Sum(t);
  };
}

// Givens rotations by `angle` in planes (k, k + 1), as ill_scaled.rotation.
std::vector<std::vector<double>> Rotation(int dims, double angle) {
  std::vector<std::vector<double>> m(dims, std::vector<double>(dims, 0.0));
  for (int i = 0; i < dims; ++i) m[i][i] = 1.0;
  const double c = std::cos(angle), s = std::sin(angle);
  for (int k = 0; k + 1 < dims; ++k) {
    for (std::vector<double>& row : m) {
      const double a = c * row[k] - s * row[k + 1];
      const double b = s * row[k] + c * row[k + 1];
      row[k] = a;
      row[k + 1] = b;
    }
  }
  return m;
}

// ill_scaled.rotated: z_i = scales[i] * (R (x - offsets))_i.
std::function<std::vector<double>(const std::vector<double>&)> Rotated(
    std::vector<double> offsets, std::vector<double> scales, double angle) {
  const auto r = Rotation(static_cast<int>(offsets.size()), angle);
  return [=](const std::vector<double>& x) {
    const std::vector<double> d = Shifted(x, offsets);
    std::vector<double> z;
    for (size_t i = 0; i < r.size(); ++i) {
      std::vector<double> dot;
      for (size_t j = 0; j < d.size(); ++j) dot.push_back(r[i][j] * d[j]);
      z.push_back(scales[i] * Sum(dot));
    }
    return z;
  };
}

Objective RotatedBowl(double power, std::vector<double> offsets,
                      std::vector<double> scales, double angle) {
  const auto z_of = Rotated(offsets, scales, angle);
  return [=](const std::vector<double>& x) {
    std::vector<double> t;
    for (double z : z_of(x)) t.push_back(std::pow(z, power));
    return Sum(t);
  };
}

Objective DifferentPowers(std::vector<double> offsets,
                          std::vector<double> scales, double angle) {
  const auto z_of = Rotated(offsets, scales, angle);
  const double n = static_cast<double>(offsets.size());
  return [=](const std::vector<double>& x) {
    const std::vector<double> z = z_of(x);
    std::vector<double> t;
    for (size_t i = 0; i < z.size(); ++i) {
      t.push_back(
          std::pow(std::abs(z[i]), 2 + 4 * static_cast<double>(i) / (n - 1)));
    }
    return Sum(t);
  };
}

Objective ExpEllipsoid(double rate, std::vector<double> offsets,
                       std::vector<double> scales, double angle) {
  const auto z_of = Rotated(offsets, scales, angle);
  return [=](const std::vector<double>& x) {
    std::vector<double> t;
    for (double z : z_of(x)) t.push_back(z * z);
    return std::expm1(rate * Sum(t));
  };
}

Objective Rosenbrock(std::vector<double> offsets, std::vector<double> scales,
                     double angle) {
  const auto z_of = Rotated(offsets, scales, angle);
  return [=](const std::vector<double>& x) {
    std::vector<double> v;
    for (double z : z_of(x)) v.push_back(z + 1);
    std::vector<double> t;
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      t.push_back(100 * std::pow(v[i + 1] - v[i] * v[i], 2.0) +
                  std::pow(1 - v[i], 2.0));
    }
    return Sum(t);
  };
}

// Powers 10^(step * i), i = 0..5.
std::vector<double> Geometric(double step) {
  std::vector<double> v;
  for (int i = 0; i < 6; ++i) v.push_back(std::pow(10.0, step * i));
  return v;
}

Objective ProductBowl(std::vector<double> offsets) {
  return [=](const std::vector<double>& x) {
    double p = 1.0;
    for (double d : Shifted(x, offsets)) p *= 1 + d * d;
    return p - 1;
  };
}

Objective ExpBowl(double rate, std::vector<double> offsets) {
  return [=](const std::vector<double>& x) {
    std::vector<double> t;
    for (double d : Shifted(x, offsets)) t.push_back(d * d);
    return std::expm1(rate * Sum(t));
  };
}

Bounds Box(int dims, double lo, double hi) { return Bounds(dims, {lo, hi}); }

std::vector<BenchFunction> MakeFunctions() {
  const std::vector<double> c6 = {1.7, -2.3, 0.9, -1.1, 2.6, -0.4};
  const std::vector<double> hard = {4.1, -3.2, 1.3, -4.6, 2.2, -0.7};
  std::vector<double> scales;
  for (int i = 0; i < 6; ++i) scales.push_back(std::pow(10.0, i / 2.0));
  return {
      {"branin", {{-5.0, 10.0}, {0.0, 15.0}}, Branin, 0.397887},
      {"hartmann6", Box(6, 0.0, 1.0), Hartmann6, -3.322368},
      {"styblinski_tang4", Box(4, -5.0, 5.0), StyblinskiTang, -39.16617 * 4},
      {"rastrigin4", Box(4, -4.12, 6.12), Rastrigin, 0.0},
      {"ackley5", Box(5, -12.0, 32.768), Ackley, 0.0},
      {"levy6", Box(6, -10.0, 10.0), Levy, 0.0},
      {"michalewicz5", Box(5, 0.0, M_PI), Michalewicz, -4.687658},
      {"quartic6", Box(6, -5.0, 5.0), PowerBowl(4, c6), 0.0},
      {"rotated_quartic6", Box(6, -5.0, 5.0), RotatedBowl(4, c6, scales, 0.6),
       0.0},
      {"power8_4", Box(4, -2.0, 2.0), PowerBowl(8, {0.8, -0.5, 1.1, -1.3}),
       0.0},
      {"quartic_ellipsoid4", Box(4, -3.0, 3.0),
       PowerBowl(4, {-1.2, 0.7, 1.9, -0.3}, {1, 10, 100, 1000}), 0.0},
      {"product3", Box(3, -5.0, 5.0), ProductBowl({2.1, -1.4, 0.6}), 0.0},
      {"exp8", Box(8, -3.0, 3.0),
       ExpBowl(0.1, {0.9, -1.6, 0.3, 1.2, -0.7, 2.0, -1.1, 0.4}), 0.0},
      {"rotated_ellipsoid6", Box(6, -5.0, 5.0),
       RotatedBowl(2, hard, Geometric(0.6), 0.7), 0.0},
      {"different_powers6", Box(6, -5.0, 5.0),
       DifferentPowers(hard, Geometric(0.2), 0.5), 0.0},
      {"exp_ellipsoid6", Box(6, -5.0, 5.0),
       ExpEllipsoid(5e-4, hard, Geometric(0.25), 0.9), 0.0},
      {"rosenbrock6", Box(6, -5.0, 5.0),
       Rosenbrock(hard, std::vector<double>(6, 0.4), 0.3), 0.0},
  };
}

}  // namespace

double Branin(const std::vector<double>& x) {
  const double b = 5.1 / (4 * std::pow(M_PI, 2.0)), c = 5 / M_PI,
               t = 1 / (8 * M_PI);
  return std::pow(x[1] - b * std::pow(x[0], 2.0) + c * x[0] - 6, 2.0) +
         10 * (1 - t) * std::cos(x[0]) + 10;
}

double Hartmann6(const std::vector<double>& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double s = 0.0;
  for (int i = 0; i < 4; ++i) {
    std::vector<double> t;
    for (int j = 0; j < 6; ++j) {
      t.push_back(a[i][j] * std::pow(x[j] - 1e-4 * p[i][j], 2.0));
    }
    s += alpha[i] * std::exp(-Sum(t));
  }
  return -s;
}

double StyblinskiTang(const std::vector<double>& x) {
  std::vector<double> t;
  for (double v : x) {
    t.push_back(std::pow(v, 4.0) - 16 * std::pow(v, 2.0) + 5 * v);
  }
  return 0.5 * Sum(t);
}

double Ackley(const std::vector<double>& x) {
  const double d = static_cast<double>(x.size());
  std::vector<double> sq, cs;
  for (double v : x) {
    sq.push_back(v * v);
    cs.push_back(std::cos(2 * M_PI * v));
  }
  const double s1 = Sum(sq) / d, s2 = Sum(cs) / d;
  return -20 * std::exp(-0.2 * std::sqrt(s1)) - std::exp(s2) + 20 + M_E;
}

double Levy(const std::vector<double>& x) {
  std::vector<double> w;
  for (double v : x) w.push_back(1 + (v - 1) / 4);
  double s = std::pow(std::sin(M_PI * w[0]), 2.0);
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    s += std::pow(w[i] - 1, 2.0) *
         (1 + 10 * std::pow(std::sin(M_PI * w[i] + 1), 2.0));
  }
  return s + std::pow(w.back() - 1, 2.0) *
                 (1 + std::pow(std::sin(2 * M_PI * w.back()), 2.0));
}

const std::vector<BenchFunction>& ServiceFunctions() {
  static const std::vector<BenchFunction>* const kFunctions =
      new std::vector<BenchFunction>(MakeFunctions());
  return *kFunctions;
}

std::vector<double> BraninCurrin(const std::vector<double>& u) {
  const double x1 = u[0], x2 = u[1];
  const double factor = x2 <= 0 ? 1.0 : 1 - std::exp(-1 / (2 * x2));
  const double currin =
      factor *
      (2300 * std::pow(x1, 3.0) + 1900 * std::pow(x1, 2.0) + 2092 * x1 + 60) /
      (100 * std::pow(x1, 3.0) + 500 * std::pow(x1, 2.0) + 4 * x1 + 20);
  return {Branin({15 * x1 - 5, 15 * x2}), currin};
}

double Hypervolume2DMin(std::vector<std::vector<double>> points,
                        const std::vector<double>& reference) {
  std::sort(points.begin(), points.end());
  double hv = 0.0, best_y = reference[1];
  for (const std::vector<double>& p : points) {
    if (!(p[0] < reference[0] && p[1] < reference[1])) continue;
    if (p[1] < best_y) {
      hv += (reference[0] - p[0]) * (best_y - p[1]);
      best_y = p[1];
    }
  }
  return hv;
}

}  // namespace cairn::gp_bench
