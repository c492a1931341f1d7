// In-process bench of the GP bandit engine (no service): median simple
// regret on Branin and Hartmann6, and suggestion time with N completed
// trials in 6-D. Usage:
//   gp_engine_bench regret [seeds] [budget]
//   gp_engine_bench timing [n_completed ...]
//   gp_engine_bench suite [seeds] [budget]   (more SFU functions vs
//   quasi-random)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tuner/gp/gp_bandit.h"

namespace {

using cairn::gp::BanditData;
using cairn::gp::GpBandit;

double Branin(const Eigen::VectorXd& u) {
  const double x1 = -5 + 15 * u[0], x2 = 15 * u[1];
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) +
         10 * (1 - t) * std::cos(x1) + 10;
}

double Hartmann6(const Eigen::VectorXd& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double s = 0;
  for (int i = 0; i < 4; ++i) {
    double e = 0;
    for (int j = 0; j < 6; ++j) {
      e += a[i][j] * std::pow(x[j] - 1e-4 * p[i][j], 2);
    }
    s += alpha[i] * std::exp(-e);
  }
  return -s;
}

// Engine options, overridable for tuning experiments through environment
// variables GP_EVALS (acquisition evaluations) and GP_REFINE (refinement
// iterations).
cairn::gp::GpBanditOptions Options() {
  cairn::gp::GpBanditOptions o;
  if (const char* e = std::getenv("GP_EVALS")) {
    o.acquisition.max_evaluations = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_POP")) {
    o.acquisition.population = std::atoi(e);
  }
  if (std::getenv("GP_NOTR")) o.use_trust_region = false;
  if (const char* e = std::getenv("GP_MODEL_POINTS")) {
    o.max_model_points = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_FIT_POINTS")) {
    o.max_fit_points = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_RESTART")) {
    o.restart_after_stalled_trials = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_RESTART_MIN_IMPROVEMENT")) {
    o.restart_min_improvement = std::atof(e);
  }
  if (const char* e = std::getenv("GP_RESTART_RADIUS")) {
    o.restart_exclusion_radius = std::atof(e);
  }
  if (const char* e = std::getenv("GP_MIN_EVALS")) {
    o.min_acquisition_evaluations = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_BETA")) o.ucb_coefficient = std::atof(e);
  if (const char* e = std::getenv("GP_INIT")) {
    o.num_initial_points = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_REFINE")) {
    o.refine_iterations = o.late_refine_iterations = std::atoi(e);
  }
  return o;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void Append(BanditData& data, const Eigen::VectorXd& x, double y) {
  const Eigen::Index n = data.x.rows();
  data.x.conservativeResize(n + 1, x.size());
  data.x.row(n) = x.transpose();
  data.y.conservativeResize(n + 1, 1);
  data.y(n, 0) = y;
  data.infeasible.push_back(false);
  ++data.num_trials;
}

void Regret(int seeds, int budget) {
  struct Fn {
    const char* name;
    int dims;
    double (*f)(const Eigen::VectorXd&);
    double optimum;
  };
  const Fn fns[] = {{"branin", 2, Branin, 0.397887},
                    {"hartmann6", 6, Hartmann6, -3.322368}};
  for (const Fn& fn : fns) {
    std::vector<double> regrets, half;
    std::vector<double> times;
    for (int s = 0; s < seeds; ++s) {
      GpBandit bandit(
          cairn::gp::MixedSpace(std::vector<cairn::gp::Dimension>(fn.dims)),
          Options());
      BanditData data;
      data.x.resize(0, fn.dims);
      data.y.resize(0, 1);
      double best = INFINITY;
      for (int t = 0; t < budget; ++t) {
        const auto start = std::chrono::steady_clock::now();
        auto sug = bandit.Suggest(
            data, 1,
            (std::getenv("GP_SEED0") ? std::atoi(std::getenv("GP_SEED0"))
                                     : 1000) +
                s);
        times.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
        if (!sug.ok()) {
          std::fprintf(stderr, "%s\n", sug.status().ToString().c_str());
          return;
        }
        const double y = fn.f((*sug)[0]);
        best = std::min(best, y);
        Append(data, (*sug)[0], -y);
        if (t + 1 == budget / 2) half.push_back(best - fn.optimum);
      }
      regrets.push_back(best - fn.optimum);
    }
    if (std::getenv("GP_VERBOSE")) {
      std::vector<double> sorted = half;
      std::sort(sorted.begin(), sorted.end());
      std::printf("  %s regrets @%d:", fn.name, budget / 2);
      for (double r : sorted) std::printf(" %.2g", r);
      std::printf("\n");
    }
    std::printf(
        "%-10s seeds=%d median regret @%d: %.4g  @%d: %.4g  "
        "median suggest %.1f ms, max %.1f ms\n",
        fn.name, seeds, budget / 2, Median(half), budget, Median(regrets),
        1e3 * Median(times),
        1e3 * *std::max_element(times.begin(), times.end()));
  }
}

// More SFU functions on the unit cube (mapped to their domains), to check
// the engine is not tuned to Branin/Hartmann6 only. Minimized.
double Scale(double u, double lo, double hi) { return lo + (hi - lo) * u; }
double Ackley(const Eigen::VectorXd& u) {
  const int d = u.size();
  double s1 = 0, s2 = 0;
  for (int i = 0; i < d; ++i) {
    const double x = Scale(u[i], -32.768, 32.768);
    s1 += x * x;
    s2 += std::cos(2 * M_PI * x);
  }
  return -20 * std::exp(-0.2 * std::sqrt(s1 / d)) - std::exp(s2 / d) + 20 + M_E;
}
double Rosenbrock(const Eigen::VectorXd& u) {
  double s = 0;
  for (int i = 0; i + 1 < u.size(); ++i) {
    const double x = Scale(u[i], -5, 10), y = Scale(u[i + 1], -5, 10);
    s += 100 * std::pow(y - x * x, 2) + std::pow(x - 1, 2);
  }
  return s;
}
double Levy(const Eigen::VectorXd& u) {
  const int d = u.size();
  auto w = [&](int i) { return 1 + (Scale(u[i], -10, 10) - 1) / 4; };
  double s = std::pow(std::sin(M_PI * w(0)), 2);
  for (int i = 0; i + 1 < d; ++i) {
    s += std::pow(w(i) - 1, 2) *
         (1 + 10 * std::pow(std::sin(M_PI * w(i) + 1), 2));
  }
  s += std::pow(w(d - 1) - 1, 2) *
       (1 + std::pow(std::sin(2 * M_PI * w(d - 1)), 2));
  return s;
}
double SixHumpCamel(const Eigen::VectorXd& u) {
  const double x = Scale(u[0], -3, 3), y = Scale(u[1], -2, 2);
  return (4 - 2.1 * x * x + x * x * x * x / 3) * x * x + x * y +
         (-4 + 4 * y * y) * y * y;
}
double StyblinskiTang(const Eigen::VectorXd& u) {
  double s = 0;
  for (int i = 0; i < u.size(); ++i) {
    const double x = Scale(u[i], -5, 5);
    s += x * x * x * x - 16 * x * x + 5 * x;
  }
  return s / 2;
}
double NoisyBranin(const Eigen::VectorXd& u) {
  static cairn::gp::Rng rng(99);
  return Branin(u) + 2.0 * rng.Normal();
}

void Suite(int seeds, int budget) {
  struct Fn {
    const char* name;
    int dims;
    double (*f)(const Eigen::VectorXd&);
    double optimum;
  };
  const Fn fns[] = {{"ackley5", 5, Ackley, 0.0},
                    {"rosenbrock4", 4, Rosenbrock, 0.0},
                    {"levy4", 4, Levy, 0.0},
                    {"camel6hump", 2, SixHumpCamel, -1.0316},
                    {"styblinski4", 4, StyblinskiTang, -39.16599 * 4},
                    {"noisybranin", 2, NoisyBranin, 0.397887}};
  const char* only = std::getenv("GP_SUITE");  // Comma-separated names.
  for (const Fn& fn : fns) {
    if (only != nullptr &&
        std::string(",").append(only).append(",").find(
            std::string(",") + fn.name + ",") == std::string::npos) {
      continue;
    }
    for (bool gp : {true, false}) {
      if (!gp && only != nullptr) continue;  // GP_SUITE: the GP only.
      std::vector<double> regrets;
      for (int s = 0; s < seeds; ++s) {
        cairn::gp::GpBanditOptions o = Options();
        if (!gp) o.num_initial_points = 1 << 30;
        GpBandit bandit(
            cairn::gp::MixedSpace(std::vector<cairn::gp::Dimension>(fn.dims)),
            o);
        BanditData data;
        data.x.resize(0, fn.dims);
        data.y.resize(0, 1);
        double best = INFINITY;
        for (int t = 0; t < budget; ++t) {
          auto sug = bandit.Suggest(data, 1, 500 + s);
          const double y = fn.f((*sug)[0]);
          // Noisy functions are judged by their noiseless value.
          best = std::min(best, fn.f == NoisyBranin ? Branin((*sug)[0]) : y);
          Append(data, (*sug)[0], -y);
        }
        regrets.push_back(best - fn.optimum);
      }
      std::printf("%-12s %-12s median regret @%d over %d seeds: %.4g\n",
                  fn.name, gp ? "gp" : "quasi-random", budget, seeds,
                  Median(regrets));
    }
  }
}

void Timing(const std::vector<int>& sizes) {
  for (int n : sizes) {
    cairn::gp::Rng rng(n);
    GpBandit bandit(cairn::gp::MixedSpace(std::vector<cairn::gp::Dimension>(6)),
                    Options());
    BanditData data;
    data.x.resize(0, 6);
    data.y.resize(0, 1);
    for (int i = 0; i < n; ++i) {
      Eigen::VectorXd x(6);
      for (int d = 0; d < 6; ++d) x[d] = rng.Uniform();
      Append(data, x, -Hartmann6(x));
    }
    // Several consecutive suggestions (checkpoint fit + refinements).
    std::vector<double> times;
    for (int k = 0; k < 9; ++k) {
      const auto start = std::chrono::steady_clock::now();
      auto sug = bandit.Suggest(data, 1, 7);
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
      Append(data, (*sug)[0], -Hartmann6((*sug)[0]));
    }
    // Batches of 8 on the same data (the fit is cached by then).
    std::vector<double> batch_times;
    for (int k = 0; k < 5; ++k) {
      const auto start = std::chrono::steady_clock::now();
      auto sug = bandit.Suggest(data, 8, 7);
      batch_times.push_back(std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count());
      Append(data, (*sug)[0], -Hartmann6((*sug)[0]));
    }
    std::printf(
        "6-D, %d completed: median suggest %.1f ms, max %.1f ms; batch of 8 "
        "%.1f ms (%.2fx one)\n",
        n, 1e3 * Median(times),
        1e3 * *std::max_element(times.begin(), times.end()),
        1e3 * Median(batch_times), Median(batch_times) / Median(times));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "regret";
  if (mode == "suite") {
    Suite(argc > 2 ? std::atoi(argv[2]) : 5,
          argc > 3 ? std::atoi(argv[3]) : 50);
  } else if (mode == "timing") {
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {100, 1000};
    Timing(sizes);
  } else {
    Regret(argc > 2 ? std::atoi(argv[2]) : 5,
           argc > 3 ? std::atoi(argv[3]) : 50);
  }
  return 0;
}
