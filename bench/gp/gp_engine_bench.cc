// In-process bench of the GP bandit engine (no service): median simple
// regret on Branin and Hartmann6, and suggestion time with N completed
// trials in 6-D. Usage:
//   gp_engine_bench regret [seeds] [budget]
//   gp_engine_bench timing [n_completed ...]
//   gp_engine_bench suite [seeds] [budget]   (more SFU functions vs
//   quasi-random)
//   gp_engine_bench service [seeds] [budget] (gp_bench.py's functions and
//   seeds 1..N, as through the service)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tuner/gp/gp_bandit.h"

namespace {

using cairn::gp::BanditData;
using cairn::gp::GpBandit;

// The benchmark functions in their native (box) coordinates, minimized;
// the unit-cube versions below map onto these.
double NativeBranin(const std::vector<double>& x) {
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(x[1] - b * x[0] * x[0] + c * x[0] - 6, 2) +
         10 * (1 - t) * std::cos(x[0]) + 10;
}
double Branin(const Eigen::VectorXd& u) {
  return NativeBranin({-5 + 15 * u[0], 15 * u[1]});
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

double NativeStyblinskiTang(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v * v * v - 16 * v * v + 5 * v;
  return 0.5 * s;
}
double NativeRastrigin(const std::vector<double>& x) {
  double s = 10.0 * x.size();
  for (double v : x) s += v * v - 10 * std::cos(2 * M_PI * v);
  return s;
}
double NativeAckley(const std::vector<double>& x) {
  const double d = x.size();
  double s1 = 0, s2 = 0;
  for (double v : x) {
    s1 += v * v;
    s2 += std::cos(2 * M_PI * v);
  }
  return -20 * std::exp(-0.2 * std::sqrt(s1 / d)) - std::exp(s2 / d) + 20 + M_E;
}
double NativeLevy(const std::vector<double>& x) {
  std::vector<double> w;
  for (double v : x) w.push_back(1 + (v - 1) / 4);
  double s = std::pow(std::sin(M_PI * w[0]), 2);
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    s += std::pow(w[i] - 1, 2) *
         (1 + 10 * std::pow(std::sin(M_PI * w[i] + 1), 2));
  }
  return s + std::pow(w.back() - 1, 2) *
                 (1 + std::pow(std::sin(2 * M_PI * w.back()), 2));
}
double NativeMichalewicz(const std::vector<double>& x) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    s -= std::sin(x[i]) * std::pow(std::sin((i + 1) * x[i] * x[i] / M_PI), 20);
  }
  return s;
}
double NativeHartmann6(const std::vector<double>& x) {
  return Hartmann6(Eigen::Map<const Eigen::VectorXd>(x.data(), 6));
}

double Scale(double u, double lo, double hi) { return lo + (hi - lo) * u; }

// `u` in the unit cube mapped onto the box [lo, hi]^d.
std::vector<double> ToBox(const Eigen::VectorXd& u, double lo, double hi) {
  std::vector<double> x(u.size());
  for (int i = 0; i < u.size(); ++i) x[i] = Scale(u[i], lo, hi);
  return x;
}

// Whether $GP_SUITE (comma-separated names) is unset or names `name`.
bool Selected(const char* name) {
  const char* only = std::getenv("GP_SUITE");
  return only == nullptr ||
         std::string(",").append(only).append(",").find(
             std::string(",") + name + ",") != std::string::npos;
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
double Ackley(const Eigen::VectorXd& u) {
  return NativeAckley(ToBox(u, -32.768, 32.768));
}
double Rosenbrock(const Eigen::VectorXd& u) {
  double s = 0;
  for (int i = 0; i + 1 < u.size(); ++i) {
    const double x = Scale(u[i], -5, 10), y = Scale(u[i + 1], -5, 10);
    s += 100 * std::pow(y - x * x, 2) + std::pow(x - 1, 2);
  }
  return s;
}
double Levy(const Eigen::VectorXd& u) { return NativeLevy(ToBox(u, -10, 10)); }
double SixHumpCamel(const Eigen::VectorXd& u) {
  const double x = Scale(u[0], -3, 3), y = Scale(u[1], -2, 2);
  return (4 - 2.1 * x * x + x * x * x * x / 3) * x * x + x * y +
         (-4 + 4 * y * y) * y * y;
}
double StyblinskiTang(const Eigen::VectorXd& u) {
  return NativeStyblinskiTang(ToBox(u, -5, 5));
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
  const bool gp_only = std::getenv("GP_SUITE") != nullptr;
  for (const Fn& fn : fns) {
    if (!Selected(fn.name)) continue;
    for (bool gp : {true, false}) {
      if (!gp && gp_only) continue;  // GP_SUITE: the GP only.
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

// The functions, boxes and seeds (1..N) of bench/gp/gp_bench.py's regret
// part, with the service's unit <-> native round trip, so that in-process
// runs reproduce what `bench/gp/run.sh --parts regret` measures for
// GP_BANDIT (the functions above, in native coordinates).
using Bounds = std::vector<std::pair<double, double>>;

// A gp_bench.py function: native box per dimension, minimized.
struct ServiceFn {
  const char* name;
  Bounds bounds;
  double (*f)(const std::vector<double>&);
  double optimum;
};

Bounds Box(int dims, double lo, double hi) { return Bounds(dims, {lo, hi}); }

// The service's round trip of a suggested unit point u: the native value
// it reports (SearchSpace's linear scaling, exact at the ends) and u as the
// designer reads it back from the trial.
std::vector<double> RoundTrip(const Bounds& bounds, Eigen::VectorXd& u) {
  std::vector<double> x(bounds.size());
  for (size_t d = 0; d < bounds.size(); ++d) {
    const auto [lo, hi] = bounds[d];
    x[d] = u[d] <= 0   ? lo
           : u[d] >= 1 ? hi
                       : std::clamp(lo + u[d] * (hi - lo), lo, hi);
    u[d] = std::clamp((x[d] - lo) / (hi - lo), 0.0, 1.0);
  }
  return x;
}

// One GP_BANDIT study of `budget` trials with the study seed `seed`; the
// best value after each trial. GP_TRACE=1 prints every trial.
std::vector<double> ServiceRun(const ServiceFn& fn, int budget, int seed) {
  const int dims = static_cast<int>(fn.bounds.size());
  GpBandit bandit(
      cairn::gp::MixedSpace(std::vector<cairn::gp::Dimension>(dims)),
      Options());
  BanditData data;
  data.x.resize(0, dims);
  data.y.resize(0, 1);
  std::vector<double> best;
  for (int t = 0; t < budget; ++t) {
    auto sug = bandit.Suggest(data, 1, seed);
    if (!sug.ok() || sug->empty()) break;
    Eigen::VectorXd u = (*sug)[0];
    const std::vector<double> x = RoundTrip(fn.bounds, u);
    const double y = fn.f(x);
    best.push_back(best.empty() ? y : std::min(best.back(), y));
    if (std::getenv("GP_TRACE")) {
      std::printf("  seed %d trial %d y %.4g best %.4g %s x", seed, t, y,
                  best.back(), bandit.last_kinds()[0].c_str());
      for (double v : x) std::printf(" %.3f", v);
      std::printf("\n");
    }
    Append(data, u, -y);
  }
  return best;
}

// Median regret at budget / 2 and budget over seeds 1..N (plus
// GP_SEED_OFFSET), and each seed's pair.
void Service(int seeds, int budget) {
  const ServiceFn fns[] = {
      {"branin", {{-5.0, 10.0}, {0.0, 15.0}}, NativeBranin, 0.397887},
      {"hartmann6", Box(6, 0.0, 1.0), NativeHartmann6, -3.322368},
      {"styblinski_tang4", Box(4, -5.0, 5.0), NativeStyblinskiTang,
       -39.16617 * 4},
      {"rastrigin4", Box(4, -4.12, 6.12), NativeRastrigin, 0.0},
      {"ackley5", Box(5, -12.0, 32.768), NativeAckley, 0.0},
      {"levy6", Box(6, -10.0, 10.0), NativeLevy, 0.0},
      {"michalewicz5", Box(5, 0.0, M_PI), NativeMichalewicz, -4.687658}};
  const int offset = std::getenv("GP_SEED_OFFSET")
                         ? std::atoi(std::getenv("GP_SEED_OFFSET"))
                         : 0;
  for (const ServiceFn& fn : fns) {
    if (!Selected(fn.name)) continue;
    std::vector<double> half, full;
    std::string per_seed;
    for (int s = 1; s <= seeds; ++s) {
      const std::vector<double> best = ServiceRun(fn, budget, s + offset);
      if (static_cast<int>(best.size()) < budget) return;
      half.push_back(best[budget / 2 - 1] - fn.optimum);
      full.push_back(best.back() - fn.optimum);
      char buf[48];
      std::snprintf(buf, sizeof buf, " %.3g/%.3g", half.back(), full.back());
      per_seed += buf;
    }
    std::printf("%-17s seeds=%d median regret @%d: %.4g  @%d: %.4g |%s\n",
                fn.name, seeds, budget / 2, Median(half), budget, Median(full),
                per_seed.c_str());
    std::fflush(stdout);
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
  if (mode == "service") {
    Service(argc > 2 ? std::atoi(argv[2]) : 10,
            argc > 3 ? std::atoi(argv[3]) : 100);
  } else if (mode == "suite") {
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
