// gp_bench.py's GP_BANDIT studies replayed in-process (see the header).
#include "bench/gp/service_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace cairn::gp_bench {
namespace {

using gp::BanditData;
using gp::GpBandit;

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

// Appends a completed trial with minimized values `f` (negated: the engine
// maximizes).
void Append(BanditData& data, const Eigen::VectorXd& u,
            const std::vector<double>& f) {
  const Eigen::Index n = data.x.rows();
  data.x.conservativeResize(n + 1, u.size());
  data.x.row(n) = u.transpose();
  data.y.conservativeResize(n + 1, static_cast<Eigen::Index>(f.size()));
  for (size_t m = 0; m < f.size(); ++m) data.y(n, m) = -f[m];
  data.infeasible.push_back(false);
  ++data.num_trials;
}

// One study of `budget` trials: the minimized values of each trial.
std::vector<std::vector<double>> Study(
    const Bounds& bounds, int objectives,
    const std::function<std::vector<double>(const std::vector<double>&)>& f,
    const gp::GpBanditOptions& options, int budget, int seed) {
  const int dims = static_cast<int>(bounds.size());
  GpBandit bandit(gp::MixedSpace(std::vector<gp::Dimension>(dims)), options);
  BanditData data;
  data.x.resize(0, dims);
  data.y.resize(0, objectives);
  std::vector<std::vector<double>> values;
  for (int t = 0; t < budget; ++t) {
    auto sug = bandit.Suggest(data, 1, seed);
    if (!sug.ok() || sug->empty()) break;
    Eigen::VectorXd u = (*sug)[0];
    const std::vector<double> x = RoundTrip(bounds, u);
    values.push_back(f(x));
    if (std::getenv("GP_TRACE")) {
      const auto& h = bandit.last_hyperparameters();
      std::printf("  seed %d trial %d y %.4g %s%s x", seed, t, values.back()[0],
                  bandit.last_kinds()[0].c_str(),
                  !h.empty() && h[0].output_power_warp ? " warped" : "");
      for (double v : x) std::printf(" %.3f", v);
      std::printf("\n");
    }
    Append(data, u, values.back());
  }
  return values;
}

}  // namespace

std::vector<std::string> ReplayNames() {
  std::vector<std::string> names;
  for (const BenchFunction& fn : ServiceFunctions()) names.push_back(fn.name);
  names.push_back("branin_currin");
  return names;
}

SeedResults Replay(const std::string& name, const gp::GpBanditOptions& options,
                   int seeds, int budget, int offset) {
  SeedResults out;
  if (name == "branin_currin") {
    for (int s = offset + 1; s <= offset + seeds; ++s) {
      const double hv = Hypervolume2DMin(
          Study({{0.0, 1.0}, {0.0, 1.0}}, 2, BraninCurrin, options, budget, s),
          {18.0, 6.0});
      out.half.push_back(hv);
      out.full.push_back(hv);
    }
    return out;
  }
  for (const BenchFunction& fn : ServiceFunctions()) {
    if (fn.name != name) continue;
    auto f = [&fn](const std::vector<double>& x) {
      return std::vector<double>{fn.f(x)};
    };
    for (int s = offset + 1; s <= offset + seeds; ++s) {
      const auto values = Study(fn.bounds, 1, f, options, budget, s);
      double best = INFINITY;
      for (int t = 0; t < static_cast<int>(values.size()); ++t) {
        best = std::min(best, values[t][0]);
        if (t + 1 == budget / 2) out.half.push_back(best - fn.optimum);
      }
      out.full.push_back(best - fn.optimum);
    }
  }
  return out;
}

PairedComparison Compare(const std::vector<double>& before,
                         const std::vector<double>& after,
                         bool higher_is_better) {
  PairedComparison c;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const double gain =
        higher_is_better ? after[i] - before[i] : before[i] - after[i];
    if (gain > 0) ++c.wins;
    if (gain == 0) ++c.ties;
    if (gain < 0) ++c.losses;
  }
  // Two-sided sign test: P(min(wins, losses) or fewer of n fair coin flips).
  const int n = c.wins + c.losses, k = std::min(c.wins, c.losses);
  double tail = 0.0, term = std::pow(0.5, n);  // C(n, 0) / 2^n
  for (int i = 0; i <= k; ++i) {
    tail += term;
    term = term * (n - i) / (i + 1);
  }
  c.p = std::min(1.0, 2 * tail);
  return c;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace cairn::gp_bench
