// GP bandit engine: initial design, per-objective GPs, UCB / GP-UCB-PE.
#include "tuner/gp/gp_bandit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tuner/gp/output_warping.h"
#include "tuner/gp/pareto.h"

namespace cairn::gp {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Completed count of the last full-fit checkpoint at or below n.
int CheckpointCount(int n) {
  if (n <= 20) return n;
  int step = 1;
  while (step * 2 <= n / 10) step *= 2;
  return (n / step) * step;
}

uint64_t HashBytes(uint64_t h, const void* data, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ULL;
  }
  return h;
}

// Fingerprint of the first `rows` completed observations.
uint64_t HashPrefix(const BanditData& data, int rows) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (int i = 0; i < rows; ++i) {
    for (Eigen::Index d = 0; d < data.x.cols(); ++d) {
      const double v = data.x(i, d);
      h = HashBytes(h, &v, sizeof v);
    }
    for (Eigen::Index m = 0; m < data.y.cols(); ++m) {
      const double v = data.y(i, m);
      h = HashBytes(h, &v, sizeof v);
    }
    const char inf = data.infeasible[i] ? 1 : 0;
    h = HashBytes(h, &inf, 1);
  }
  return h;
}

// At most `cap` row indices (ascending): the best `best_fraction` by score,
// the rest a seeded random sample of the others.
std::vector<int> SelectRows(const Eigen::VectorXd& score, int cap,
                            double best_fraction, uint64_t seed) {
  const int n = static_cast<int>(score.size());
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  if (n <= cap) return all;
  std::stable_sort(all.begin(), all.end(),
                   [&](int a, int b) { return score[a] > score[b]; });
  const int num_best = static_cast<int>(best_fraction * cap);
  std::vector<int> chosen(all.begin(), all.begin() + num_best);
  std::vector<int> rest(all.begin() + num_best, all.end());
  Rng rng(seed);
  for (int i = 0; i < cap - num_best; ++i) {  // Partial Fisher-Yates.
    const int j = i + rng.UniformInt(static_cast<int>(rest.size()) - i);
    std::swap(rest[i], rest[j]);
    chosen.push_back(rest[i]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

Eigen::MatrixXd Rows(const Eigen::MatrixXd& m, const std::vector<int>& rows) {
  Eigen::MatrixXd out(rows.size(), m.cols());
  for (size_t i = 0; i < rows.size(); ++i) out.row(i) = m.row(rows[i]);
  return out;
}

// Exact-match lookup of canonical points (duplicates are bit-identical after
// Canonicalize, so hashing the bytes is exact).
class PointSet {
 public:
  explicit PointSet(const Eigen::MatrixXd& rows) {
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
      set_.insert(Key(rows.row(i)));
    }
  }
  template <typename Row>
  bool Contains(const Row& row) const {
    return set_.count(Key(row)) > 0;
  }

 private:
  template <typename Row>
  static std::string Key(const Row& row) {
    std::string key(sizeof(double) * row.size(), '\0');
    for (Eigen::Index d = 0; d < row.size(); ++d) {
      const double v = row[d] == 0.0 ? 0.0 : row[d];  // -0.0 == 0.0.
      std::memcpy(&key[sizeof(double) * d], &v, sizeof v);
    }
    return key;
  }
  absl::flat_hash_set<std::string> set_;
};

bool ContainsRow(const Eigen::MatrixXd& set, const Eigen::VectorXd& x) {
  for (Eigen::Index i = 0; i < set.rows(); ++i) {
    if ((set.row(i) - x.transpose()).cwiseAbs().maxCoeff() <= 1e-12) {
      return true;
    }
  }
  return false;
}

void AppendRow(Eigen::MatrixXd& m, const Eigen::VectorXd& x) {
  m.conservativeResize(m.rows() + 1, x.size());
  m.row(m.rows() - 1) = x.transpose();
}

}  // namespace

GpBandit::GpBandit(MixedSpace space, GpBanditOptions options)
    : space_(std::move(space)), options_(std::move(options)) {
  categorical_.resize(space_.size());
  for (int d = 0; d < space_.size(); ++d) {
    categorical_[d] = space_.IsCategorical(d);
  }
}

int GpBandit::num_initial_points() const {
  if (options_.num_initial_points > 0) return options_.num_initial_points;
  return std::clamp(2 * space_.size(), 5, 20);
}

std::vector<Eigen::VectorXd> GpBandit::QuasiRandom(const BanditData& data,
                                                   int count,
                                                   uint64_t seed) const {
  std::vector<Eigen::VectorXd> out;
  Eigen::MatrixXd excluded = data.pending;
  if (excluded.rows() == 0) excluded.resize(0, space_.size());
  int64_t index =
      std::max<int64_t>(data.num_trials, data.x.rows() + data.pending.rows());
  for (int tries = 0;
       static_cast<int>(out.size()) < count && tries < 200 * count; ++tries) {
    Eigen::VectorXd x = space_.Halton(index++, seed);
    if (ContainsRow(excluded, x)) continue;
    out.push_back(x);
    AppendRow(excluded, x);
  }
  Rng rng(MixSeed(seed, static_cast<uint64_t>(index), 0xFA11));
  for (int tries = 0;
       static_cast<int>(out.size()) < count && tries < 2000 * count; ++tries) {
    Eigen::VectorXd x = space_.Sample(rng);
    if (ContainsRow(excluded, x)) continue;
    out.push_back(x);
    AppendRow(excluded, x);
  }
  return out;
}

std::vector<Eigen::VectorXd> GpBandit::FallBack(const BanditData& data,
                                                int count, uint64_t seed) {
  std::vector<Eigen::VectorXd> out = QuasiRandom(data, count, seed);
  last_kinds_.assign(out.size(), "quasi_random");
  return out;
}

absl::StatusOr<GpHyperparameters> GpBandit::Hyperparameters(
    const BanditData& data, int objective, const Eigen::MatrixXd& x,
    const Eigen::VectorXd& yw, uint64_t seed) {
  const int n = static_cast<int>(data.x.rows());
  const int nc = CheckpointCount(n);
  const uint64_t key =
      MixSeed(HashPrefix(data, nc), static_cast<uint64_t>(objective), seed);
  const GpHyperparameters* checkpoint = nullptr;
  for (const CacheEntry& e : cache_) {
    if (e.key == key) checkpoint = &e.h;
  }
  if (checkpoint == nullptr) {
    // Full fit on the first nc points only, so it is reproducible.
    std::vector<bool> inf(data.infeasible.begin(),
                          data.infeasible.begin() + nc);
    const Eigen::VectorXd yc =
        WarpObjective(data.y.col(objective).head(nc), inf);
    const std::vector<int> rows =
        SelectRows(yc, options_.max_fit_points, 0.0, MixSeed(seed, nc, 2));
    GpFitOptions fit;
    fit.max_iterations = options_.fit_iterations;
    fit.num_random_restarts = rows.size() > 100
                                  ? std::min(1, options_.num_fit_restarts)
                                  : options_.num_fit_restarts;
    absl::StatusOr<GpHyperparameters> h = FitHyperparameters(
        categorical_, Rows(data.x.topRows(nc), rows), Rows(yc, rows).col(0),
        fit, MixSeed(seed, static_cast<uint64_t>(nc), objective));
    if (!h.ok()) return h.status();
    cache_.push_back({key, *std::move(h)});
    while (cache_.size() > 16) cache_.pop_front();
    checkpoint = &cache_.back().h;
  }
  const int refine_iterations = n > options_.full_acquisition_budget_trials
                                    ? options_.late_refine_iterations
                                    : options_.refine_iterations;
  if (nc == n || refine_iterations <= 0) return *checkpoint;
  // Warm-started refinement on (a subsample of) the current data.
  const std::vector<int> rows =
      SelectRows(yw, options_.max_fit_points, 0.0, MixSeed(seed, n, 3));
  GpFitOptions refine;
  refine.num_random_restarts = 0;
  refine.start_from_prior_mode = false;
  refine.max_iterations = refine_iterations;
  return FitHyperparameters(categorical_, Rows(x, rows), Rows(yw, rows).col(0),
                            refine, MixSeed(seed, n, objective), checkpoint);
}

absl::StatusOr<std::vector<Eigen::VectorXd>> GpBandit::Suggest(
    const BanditData& data, int count, uint64_t seed) {
  const int dims = space_.size();
  const Eigen::Index n = data.x.rows();
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("GpBandit::Suggest: count must be >= 1, got ", count));
  }
  if ((n > 0 && data.x.cols() != dims) || data.y.rows() != n ||
      static_cast<Eigen::Index>(data.infeasible.size()) != n ||
      (data.pending.rows() > 0 && data.pending.cols() != dims) ||
      (n > 0 && data.y.cols() < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GpBandit::Suggest: inconsistent data: x ", n, "x", data.x.cols(),
        ", y ", data.y.rows(), "x", data.y.cols(), ", infeasible ",
        data.infeasible.size(), ", pending ", data.pending.rows(), "x",
        data.pending.cols(), ", space dims ", dims));
  }
  last_kinds_.clear();
  last_hyperparameters_.clear();
  if (n < num_initial_points()) return FallBack(data, count, seed);

  const int num_obj = static_cast<int>(data.y.cols());
  Eigen::MatrixXd yw(n, num_obj);
  for (int m = 0; m < num_obj; ++m) {
    yw.col(m) = WarpObjective(data.y.col(m), data.infeasible);
  }
  const std::vector<int> rows = SelectRows(
      yw.rowwise().mean(), options_.max_model_points, 0.5, MixSeed(seed, n, 1));
  const Eigen::MatrixXd xs = Rows(data.x, rows);
  const Eigen::MatrixXd ys = Rows(yw, rows);

  std::vector<GaussianProcess> models;
  for (int m = 0; m < num_obj; ++m) {
    absl::StatusOr<GpHyperparameters> h =
        Hyperparameters(data, m, xs, ys.col(m), seed);
    if (!h.ok()) return FallBack(data, count, seed);
    absl::StatusOr<GaussianProcess> gp =
        GaussianProcess::Create(categorical_, xs, ys.col(m), *h);
    if (!gp.ok()) return FallBack(data, count, seed);
    // Pending points only shrink the variance; a failure to condition on
    // them (degenerate duplicates) still leaves duplicates forbidden below.
    (void)gp->AddPendingPoints(data.pending);
    last_hyperparameters_.push_back(*h);
    models.push_back(*std::move(gp));
  }

  // Feasibility: GP regression on 1 (feasible) / 0 (infeasible) labels,
  // hyperparameters refined from the first objective's; candidates predicted
  // more likely infeasible than feasible rank after the others.
  std::optional<GaussianProcess> feasibility;
  double feasible_share = 1.0;
  if (options_.use_feasibility_model) {
    Eigen::VectorXd labels(static_cast<Eigen::Index>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
      labels[i] = data.infeasible[rows[i]] ? 0.0 : 1.0;
    }
    feasible_share = labels.mean();
    if (feasible_share < 1.0) {
      GpHyperparameters hf = last_hyperparameters_[0];
      hf.log_signal_variance =
          std::log(std::max(feasible_share * (1 - feasible_share), 1e-2));
      hf.log_noise_variance = hf.log_signal_variance + std::log(1e-2);
      // A short fit of the label GP, warm-started from the objective's.
      const Eigen::VectorXd centered = labels.array() - feasible_share;
      const std::vector<int> fit_rows = SelectRows(
          centered, options_.max_fit_points, 0.0, MixSeed(seed, n, 4));
      GpFitOptions fit;
      fit.num_random_restarts = 0;
      fit.start_from_prior_mode = false;
      fit.max_iterations = 20;
      absl::StatusOr<GpHyperparameters> fitted = FitHyperparameters(
          categorical_, Rows(xs, fit_rows), Rows(centered, fit_rows).col(0),
          fit, MixSeed(seed, n, 5), &hf);
      if (fitted.ok()) hf = *fitted;
      absl::StatusOr<GaussianProcess> f = GaussianProcess::Create(
          categorical_, xs, labels.array() - feasible_share, hf);
      if (f.ok()) feasibility = *std::move(f);
    }
  }

  const double beta = options_.ucb_coefficient;
  const double min_relative_variance = options_.min_relative_variance;
  // Feasible observed rows (in the model subset).
  std::vector<int> feasible;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!data.infeasible[rows[i]] && data.y.row(rows[i]).allFinite()) {
      feasible.push_back(static_cast<int>(i));
    }
  }
  // Single objective: PE's promising region is UCB >= the best lower bound
  // at an observed point.
  double lcb_threshold = kNegInf;
  if (num_obj == 1) {
    Eigen::VectorXd mu, var;
    models[0].Predict(xs, &mu, &var);
    lcb_threshold = (mu.array() - beta * var.array().sqrt()).maxCoeff();
  }
  // Several objectives: hypervolume scalarizations relative to the observed
  // front.
  Rng weight_rng(MixSeed(seed, static_cast<uint64_t>(data.num_trials), 0x3E));
  Eigen::MatrixXd weights;
  Eigen::VectorXd reference, best_s;
  if (num_obj > 1) {
    weights = RandomScalarizationWeights(options_.num_scalarizations, num_obj,
                                         weight_rng);
    reference = Eigen::VectorXd::Constant(num_obj, -1.0);
    if (!feasible.empty()) {
      for (int m = 0; m < num_obj; ++m) {
        double lo = std::numeric_limits<double>::infinity();
        for (int i : feasible) lo = std::min(lo, ys(i, m));
        reference[m] = lo - 0.1;
      }
    }
    best_s = Eigen::VectorXd::Zero(weights.rows());
    for (Eigen::Index k = 0; k < weights.rows(); ++k) {
      for (int i : feasible) {
        best_s[k] = std::max(best_s[k], HypervolumeScalarization(
                                            ys.row(i).transpose(), reference,
                                            weights.row(k).transpose()));
      }
    }
  }

  // Trust region over the continuous (non-grid) dimensions.
  double radius = std::numeric_limits<double>::infinity();
  std::vector<int> tr_dims;
  for (int d = 0; d < dims; ++d) {
    if (!space_.IsCategorical(d) && space_.dim(d).grid.empty()) {
      tr_dims.push_back(d);
    }
  }
  if (options_.use_trust_region && !tr_dims.empty()) {
    radius = TrustRegionRadius(static_cast<int>(n), dims);
  }
  const Eigen::MatrixXd& centers = data.x;

  Eigen::MatrixXd forbidden = data.pending;
  if (forbidden.rows() == 0) forbidden.resize(0, dims);

  // Optimizer seeds: the best observed points.
  std::vector<int> order(feasible);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ys.row(a).mean() > ys.row(b).mean();
  });
  order.resize(std::min<size_t>(order.size(), 5));
  const Eigen::MatrixXd seeds = Rows(xs, order);

  AcquisitionOptimizerOptions acquisition = options_.acquisition;
  if (n > options_.full_acquisition_budget_trials) {
    acquisition.max_evaluations = std::max(
        std::min(options_.min_acquisition_evaluations,
                 acquisition.max_evaluations),
        static_cast<int>(static_cast<double>(acquisition.max_evaluations) *
                         options_.full_acquisition_budget_trials / n));
  }
  const PointSet completed_set(data.x);
  std::vector<Eigen::VectorXd> out;
  for (int b = 0; b < count; ++b) {
    const bool pure_exploration = b > 0;
    BatchScoreFn score = [&](const Eigen::MatrixXd& cand, Eigen::VectorXd* s) {
      const Eigen::Index c = cand.rows();
      Eigen::MatrixXd ucb(c, num_obj);
      Eigen::VectorXd total_var = Eigen::VectorXd::Zero(c);
      Eigen::VectorXd relative_var = Eigen::VectorXd::Zero(c);
      for (int m = 0; m < num_obj; ++m) {
        Eigen::VectorXd mu, var;
        models[m].Predict(cand, &mu, &var);
        ucb.col(m) = mu.array() + beta * var.array().sqrt();
        total_var += var;
        relative_var +=
            var / (num_obj *
                   std::exp(models[m].hyperparameters().log_signal_variance));
      }
      Eigen::VectorXd feasible_mean;
      if (feasibility.has_value()) {
        feasibility->Predict(cand, &feasible_mean, nullptr);
      }
      Eigen::VectorXd acq(c), improves(c);
      for (Eigen::Index i = 0; i < c; ++i) {
        if (num_obj == 1) {
          acq[i] = ucb(i, 0);
          improves[i] = acq[i] >= lcb_threshold;
        } else {
          double improvement = 0.0, level = 0.0;
          for (Eigen::Index k = 0; k < weights.rows(); ++k) {
            const double sk = HypervolumeScalarization(
                ucb.row(i).transpose(), reference, weights.row(k).transpose());
            improvement += std::max(0.0, sk - best_s[k]);
            level += sk;
          }
          acq[i] = (improvement + 1e-6 * level) / weights.rows();
          improves[i] = improvement > 0.0;
        }
      }
      s->resize(c);
      for (Eigen::Index i = 0; i < c; ++i) {
        double v = acq[i];
        if (pure_exploration) {
          v = improves[i] > 0.0 ? total_var[i] : -1e6 + acq[i];
        }
        if (relative_var[i] < min_relative_variance) v -= 1e3;
        if (feasibility.has_value() &&
            feasible_mean[i] + feasible_share < 0.5) {
          v -= 1e3;
        }
        if (std::isfinite(radius)) {
          double dist = std::numeric_limits<double>::infinity();
          for (Eigen::Index j = 0; j < centers.rows(); ++j) {
            double dj = 0.0;
            for (int d : tr_dims) {
              dj = std::max(dj, std::abs(cand(i, d) - centers(j, d)));
            }
            dist = std::min(dist, dj);
          }
          if (dist > radius) v = -1e9 - dist;
        }
        if (completed_set.Contains(cand.row(i))) v = -1e12;
        for (Eigen::Index j = 0; j < forbidden.rows(); ++j) {
          if ((cand.row(i) - forbidden.row(j)).cwiseAbs().maxCoeff() <= 1e-12) {
            v = kNegInf;
            break;
          }
        }
        (*s)[i] = std::isnan(v) ? kNegInf : v;
      }
    };
    Rng rng(MixSeed(seed, static_cast<uint64_t>(data.num_trials) * 4099 + n,
                    0xAC0 + b));
    AcquisitionResult best = MaximizeAcquisition(space_, score, seeds, centers,
                                                 radius, acquisition, rng);
    if (best.x.size() == 0) {
      // Everything the search saw was forbidden: try random points.
      for (int tries = 0; tries < 2000; ++tries) {
        Eigen::VectorXd x = space_.Sample(rng);
        if (!ContainsRow(forbidden, x)) {
          best.x = x;
          break;
        }
      }
      if (best.x.size() == 0) break;  // The space is exhausted.
    }
    out.push_back(best.x);
    last_kinds_.push_back(pure_exploration ? "pure_exploration" : "ucb");
    AppendRow(forbidden, best.x);
    for (GaussianProcess& gp : models) {
      (void)gp.AddPendingPoints(best.x.transpose());
    }
  }
  return out;
}

}  // namespace cairn::gp
