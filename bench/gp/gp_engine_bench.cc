// In-process bench of the GP bandit engine (no service): median simple
// regret on Branin and Hartmann6, and suggestion time with N completed
// trials in 6-D. Usage:
//   gp_engine_bench regret [seeds] [budget]
//   gp_engine_bench timing [n_completed ...]
//   gp_engine_bench suite [seeds] [budget]   (more SFU functions vs
//   quasi-random)
//   gp_engine_bench service [seeds] [budget] (gp_bench.py's functions and
//   seeds 1..N, as through the service; GP_SUITE=name,... picks them)
//   gp_engine_bench compare [seeds] [budget] (the same, power warp off
//   against on: medians and per-seed wins/losses)
//   gp_engine_bench vsrandom [seeds] [budget] (the replay's functions, GP
//   against uniform random search: medians and per-seed wins/losses)
//   gp_engine_bench points FILE [first] [step] [seed] (a study's
//   observations replayed, each suggestion diagnosed; points_replay.h)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench/gp/bench_functions.h"
#include "bench/gp/points_replay.h"
#include "bench/gp/service_replay.h"
#include "tuner/gp/gp_bandit.h"

namespace {

using cairn::gp::BanditData;
using cairn::gp::GpBandit;
using cairn::gp_bench::Median;

double Branin(const Eigen::VectorXd& u) {
  return cairn::gp_bench::Branin({-5 + 15 * u[0], 15 * u[1]});
}
double Hartmann6(const Eigen::VectorXd& x) {
  return cairn::gp_bench::Hartmann6(std::vector<double>(x.begin(), x.end()));
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
  if (const char* e = std::getenv("GP_BOUNDARY_ROUNDS")) {
    o.boundary_rounds = std::atoi(e);
  }
  if (const char* e = std::getenv("GP_BOUNDARY_MARGIN")) {
    o.boundary_margin = std::atof(e);
  }
  if (const char* e = std::getenv("GP_REFINE")) {
    o.refine_iterations = o.late_refine_iterations = std::atoi(e);
  }
  return o;
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
  return cairn::gp_bench::Ackley(ToBox(u, -32.768, 32.768));
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
  return cairn::gp_bench::Levy(ToBox(u, -10, 10));
}
double SixHumpCamel(const Eigen::VectorXd& u) {
  const double x = Scale(u[0], -3, 3), y = Scale(u[1], -2, 2);
  return (4 - 2.1 * x * x + x * x * x * x / 3) * x * x + x * y +
         (-4 + 4 * y * y) * y * y;
}
double StyblinskiTang(const Eigen::VectorXd& u) {
  return cairn::gp_bench::StyblinskiTang(ToBox(u, -5, 5));
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

// The names GP_SUITE selects among the replay's functions (all by default).
std::vector<std::string> ReplaySelection() {
  std::vector<std::string> names;
  for (const std::string& name : cairn::gp_bench::ReplayNames()) {
    if (Selected(name.c_str())) names.push_back(name);
  }
  return names;
}

int SeedOffset() {
  const char* e = std::getenv("GP_SEED_OFFSET");
  return e != nullptr ? std::atoi(e) : 0;
}

// gp_bench.py's studies replayed in-process (service_replay.h): median
// regret at budget / 2 and budget (hypervolume for branin_currin) and each
// seed's pair. GP_NOWARP=1 turns the output power warp off.
void Service(int seeds, int budget) {
  cairn::gp::GpBanditOptions options = Options();
  if (std::getenv("GP_NOWARP")) options.power_warp = false;
  for (const std::string& name : ReplaySelection()) {
    const cairn::gp_bench::SeedResults r =
        cairn::gp_bench::Replay(name, options, seeds, budget, SeedOffset());
    std::string per_seed;
    for (size_t i = 0; i < r.full.size(); ++i) {
      char buf[48];
      std::snprintf(buf, sizeof buf, " %.3g/%.3g", r.half[i], r.full[i]);
      per_seed += buf;
    }
    std::printf("%-18s seeds=%d median @%d: %.4g  @%d: %.4g |%s\n",
                name.c_str(), seeds, budget / 2, Median(r.half), budget,
                Median(r.full), per_seed.c_str());
    std::fflush(stdout);
  }
}

// Each replayed study twice, with the output power warp off (the engine of
// 02f361b, before the warp) and with the current options: medians, per-seed
// wins/ties/losses of "after" and the sign test's p-value.
void CompareWarp(int seeds, int budget) {
  cairn::gp::GpBanditOptions before = Options(), after = Options();
  before.power_warp = false;
  std::printf("%-18s %6s %11s %11s %9s %6s\n", "function", "trials", "before",
              "after", "w/t/l", "p");
  for (const std::string& name : ReplaySelection()) {
    const bool hv = name == "branin_currin";
    const int offset = SeedOffset();
    const auto b = cairn::gp_bench::Replay(name, before, seeds, budget, offset);
    const auto a = cairn::gp_bench::Replay(name, after, seeds, budget, offset);
    for (const bool half : {true, false}) {
      if (hv && half) continue;
      const std::vector<double>& vb = half ? b.half : b.full;
      const std::vector<double>& va = half ? a.half : a.full;
      const cairn::gp_bench::PairedComparison c =
          cairn::gp_bench::Compare(vb, va, hv);
      std::printf("%-18s %6d %11.4g %11.4g %3d/%2d/%2d %6.3f\n", name.c_str(),
                  half ? budget / 2 : budget, Median(vb), Median(va), c.wins,
                  c.ties, c.losses, c.p);
    }
    std::fflush(stdout);
  }
}
// Regret of uniform random search on `fn` for study seed s at budget / 2
// and budget (its own random stream, not the service's RANDOM_SEARCH).
std::pair<double, double> RandomRegret(const cairn::gp_bench::BenchFunction& fn,
                                       int s, int budget) {
  cairn::gp::Rng rng(cairn::gp::MixSeed(static_cast<uint64_t>(s), 0x5EA7));
  double best = INFINITY, half = INFINITY;
  for (int t = 0; t < budget; ++t) {
    std::vector<double> x;
    for (const auto& [lo, hi] : fn.bounds)
      x.push_back(Scale(rng.Uniform(), lo, hi));
    best = std::min(best, fn.f(x));
    if (t + 1 == budget / 2) half = best;
  }
  return {half - fn.optimum, best - fn.optimum};
}

// GP_BANDIT (current options) against uniform random search on the
// replay's single-objective functions: medians at budget / 2 and budget and
// per-seed wins/ties/losses of the GP with the sign test's p.
void VersusRandom(int seeds, int budget) {
  std::printf("%-18s %6s %11s %11s %9s %6s\n", "function", "trials", "random",
              "GP_BANDIT", "w/t/l", "p");
  const int offset = SeedOffset();
  for (const cairn::gp_bench::BenchFunction& fn :
       cairn::gp_bench::ServiceFunctions()) {
    if (!Selected(fn.name.c_str())) continue;
    const auto gp =
        cairn::gp_bench::Replay(fn.name, Options(), seeds, budget, offset);
    std::vector<double> rh, rf;
    for (int s = offset + 1; s <= offset + seeds; ++s) {
      const auto [h, f] = RandomRegret(fn, s, budget);
      rh.push_back(h);
      rf.push_back(f);
    }
    for (const bool half : {true, false}) {
      const std::vector<double>& r = half ? rh : rf;
      const std::vector<double>& g = half ? gp.half : gp.full;
      const auto c = cairn::gp_bench::Compare(r, g, false);
      std::printf("%-18s %6d %11.4g %11.4g %3d/%2d/%2d %6.3f\n",
                  fn.name.c_str(), half ? budget / 2 : budget, Median(r),
                  Median(g), c.wins, c.ties, c.losses, c.p);
    }
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
  if (mode == "points" && argc > 2) {
    return cairn::gp_bench::ReplayPoints(
               argv[2], argc > 3 ? std::atoi(argv[3]) : 20,
               argc > 4 ? std::atoi(argv[4]) : 10,
               argc > 5 ? std::atoi(argv[5]) : 1, Options())
               ? 0
               : 1;
  }
  if (mode == "vsrandom") {
    VersusRandom(argc > 2 ? std::atoi(argv[2]) : 30,
                 argc > 3 ? std::atoi(argv[3]) : 50);
  } else if (mode == "compare") {
    CompareWarp(argc > 2 ? std::atoi(argv[2]) : 30,
                argc > 3 ? std::atoi(argv[3]) : 100);
  } else if (mode == "service") {
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
