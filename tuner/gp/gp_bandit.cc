// GP bandit engine: initial design, per-objective GPs with cached
// hyperparameter fits; the acquisition (UCB / GP-UCB-PE) is in
// gp_bandit_acquisition.cc.
#include "tuner/gp/gp_bandit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner/gp/gp_bandit_acquisition.h"
#include "tuner/gp/low_priority.h"
#include "tuner/gp/output_warping.h"
#include "tuner/gp/rows.h"

namespace cairn::gp {
namespace {

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

// How much likelier (log marginal likelihood with the Jacobian, in nats)
// the power-warped outputs must be to be modelled instead of the plain ones:
// e^3, "strong" evidence on Jeffreys' scale. On multimodal functions (Ackley)
// the two scores are within a few nats and flip between checkpoints, and
// taking the power warp there on a small margin cost regret; on steep bowls
// the power warp wins by tens of nats once a few trials near the optimum
// are in.
constexpr double kPowerWarpMargin = 3.0;

// A fit's hyperparameters on (x, y) and its score for comparing output
// warps: the log marginal likelihood of y plus the log-Jacobian of the warp
// (`jacobian`), so that both warps are scored as densities of the same raw
// values.
struct ScoredFit {
  GpHyperparameters h;
  double score = -INFINITY;
};

absl::StatusOr<ScoredFit> FitAndScore(const CategoricalMask& categorical,
                                      const Eigen::MatrixXd& x,
                                      const Eigen::VectorXd& y,
                                      const GpFitOptions& fit, double jacobian,
                                      uint64_t seed) {
  absl::StatusOr<GpHyperparameters> h =
      FitHyperparameters(categorical, x, y, fit, seed);
  if (!h.ok()) return h.status();
  absl::StatusOr<double> ll = LogMarginalLikelihood(categorical, x, y, *h);
  return ScoredFit{*h, ll.ok() ? *ll + jacobian : -INFINITY};
}

// The full fit (prior mode and random restarts) of a checkpoint, on the
// first `nc` completed points only, so it is reproducible. With the power
// warp on and a power other than 1 chosen for the values, fits both the
// plain and the power-warped outputs and keeps the likelier (see ScoredFit),
// recording the choice in output_power_warp.
absl::StatusOr<GpHyperparameters> FitCheckpoint(
    const CategoricalMask& categorical, const BanditData& data, int objective,
    int nc, const GpBanditOptions& options, uint64_t seed) {
  std::vector<bool> inf(data.infeasible.begin(), data.infeasible.begin() + nc);
  const Eigen::VectorXd values = data.y.col(objective).head(nc);
  Eigen::VectorXd plain_slopes, power_slopes;
  const Eigen::VectorXd plain =
      WarpObjective(values, inf, false, &plain_slopes);
  const Eigen::VectorXd powered =
      options.power_warp ? WarpObjective(values, inf, true, &power_slopes)
                         : plain;
  const std::vector<int> rows =
      SelectRows(plain, options.max_fit_points, 0.0, MixSeed(seed, nc, 2));
  GpFitOptions fit;
  fit.max_iterations = options.fit_iterations;
  fit.num_random_restarts = rows.size() > 100
                                ? std::min(1, options.num_fit_restarts)
                                : options.num_fit_restarts;
  const Eigen::MatrixXd x = Rows(data.x.topRows(nc), rows);
  const uint64_t fit_seed = MixSeed(seed, static_cast<uint64_t>(nc), objective);
  if (powered == plain) {
    return FitHyperparameters(categorical, x, Rows(plain, rows).col(0), fit,
                              fit_seed);
  }
  // Rows whose values both warps keep (the good half): the rank-warped
  // rest carries no density to compare.
  double plain_jacobian = 0.0, power_jacobian = 0.0;
  for (int r : rows) {
    if (std::isfinite(plain_slopes[r]) && std::isfinite(power_slopes[r])) {
      plain_jacobian += plain_slopes[r];
      power_jacobian += power_slopes[r];
    }
  }
  absl::StatusOr<ScoredFit> a = FitAndScore(
      categorical, x, Rows(plain, rows).col(0), fit, plain_jacobian, fit_seed);
  absl::StatusOr<ScoredFit> b =
      FitAndScore(categorical, x, Rows(powered, rows).col(0), fit,
                  power_jacobian, fit_seed);
  if (b.ok() && (!a.ok() || b->score > a->score + kPowerWarpMargin)) {
    b->h.output_power_warp = true;
    return b->h;
  }
  if (!a.ok()) return a.status();
  return a->h;
}

// A warm-started refinement of `checkpoint` by `iterations` L-BFGS-B
// iterations on (a subsample of) the model rows (x, yw) of `n` completed
// points.
absl::StatusOr<GpHyperparameters> RefineHyperparameters(
    const CategoricalMask& categorical, const Eigen::MatrixXd& x,
    const Eigen::VectorXd& yw, const GpHyperparameters& checkpoint,
    int iterations, int max_fit_points, int n, int objective, uint64_t seed) {
  const std::vector<int> rows =
      SelectRows(yw, max_fit_points, 0.0, MixSeed(seed, n, 3));
  GpFitOptions refine;
  refine.num_random_restarts = 0;
  refine.start_from_prior_mode = false;
  refine.max_iterations = iterations;
  absl::StatusOr<GpHyperparameters> h =
      FitHyperparameters(categorical, Rows(x, rows), Rows(yw, rows).col(0),
                         refine, MixSeed(seed, n, objective), &checkpoint);
  if (h.ok()) h->output_power_warp = checkpoint.output_power_warp;
  return h;
}

absl::Status ValidateSuggestInput(const BanditData& data, int count, int dims) {
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
  return absl::OkStatus();
}

// The model rows, each objective warped as its checkpoint fit chose.
ModelRows SelectModelRows(const BanditData& data,
                          const std::vector<GpHyperparameters>& checkpoints,
                          int max_points, uint64_t seed) {
  const Eigen::Index n = data.x.rows();
  const int num_obj = static_cast<int>(data.y.cols());
  Eigen::MatrixXd yw(n, num_obj);
  for (int m = 0; m < num_obj; ++m) {
    yw.col(m) = WarpObjective(data.y.col(m), data.infeasible,
                              checkpoints[m].output_power_warp);
  }
  ModelRows model;
  model.rows =
      SelectRows(yw.rowwise().mean(), max_points, 0.5, MixSeed(seed, n, 1));
  model.x = Rows(data.x, model.rows);
  model.y = Rows(yw, model.rows);
  return model;
}

// Cache key of the checkpoint fit on the first `nc` observations.
uint64_t CheckpointKey(const BanditData& data, int nc, int objective,
                       uint64_t seed) {
  return MixSeed(HashPrefix(data, nc), static_cast<uint64_t>(objective), seed);
}

}  // namespace

GpBandit::GpBandit(MixedSpace space, GpBanditOptions options)
    : space_(std::move(space)),
      options_(std::move(options)),
      fits_(std::make_unique<CheckpointFits>(options_.background_fit_nice)),
      worker_(std::make_unique<DeadlineWorker>(options_.suggest_nice)) {
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
    if (ContainsRow(excluded, x.transpose())) continue;
    out.push_back(x);
    AppendRow(excluded, x);
  }
  Rng rng(MixSeed(seed, static_cast<uint64_t>(index), 0xFA11));
  for (int tries = 0;
       static_cast<int>(out.size()) < count && tries < 2000 * count; ++tries) {
    Eigen::VectorXd x = space_.Sample(rng);
    if (ContainsRow(excluded, x.transpose())) continue;
    out.push_back(x);
    AppendRow(excluded, x);
  }
  return out;
}

GpBandit::Outcome GpBandit::FallBack(const BanditData& data, int count,
                                     uint64_t seed,
                                     const std::string& kind) const {
  Outcome out;
  out.points = QuasiRandom(data, count, seed);
  out.kinds.assign(out.points->size(), kind);
  return out;
}

absl::StatusOr<GpBandit::Checkpoint> GpBandit::CheckpointHyperparameters(
    const BanditData& data, int objective, uint64_t seed) const {
  const int n = static_cast<int>(data.x.rows());
  int nc = CheckpointCount(n);
  if (options_.background_fit_trials > 0 &&
      n > options_.background_fit_trials) {
    fits_->Prefetch(CheckpointKey(data, nc, objective, seed),
                    CheckpointFit(data, nc, objective, seed));
    // The previous checkpoint, or the last one at or below the threshold
    // (fitted in the foreground by a suggestion at or below it).
    nc = std::max(CheckpointCount(nc - 1),
                  CheckpointCount(options_.background_fit_trials));
  }
  absl::StatusOr<GpHyperparameters> h =
      fits_->Get(CheckpointKey(data, nc, objective, seed),
                 CheckpointFit(data, nc, objective, seed));
  if (!h.ok()) return h.status();
  return Checkpoint{*std::move(h), nc};
}

absl::StatusOr<GpHyperparameters> GpBandit::Hyperparameters(
    const BanditData& data, int objective, const Checkpoint& checkpoint,
    const Eigen::MatrixXd& x, const Eigen::VectorXd& yw, uint64_t seed) const {
  const int n = static_cast<int>(data.x.rows());
  const int refine_iterations = n > options_.full_acquisition_budget_trials
                                    ? options_.late_refine_iterations
                                    : options_.refine_iterations;
  if (checkpoint.nc == n || refine_iterations <= 0) return checkpoint.h;
  return RefineHyperparameters(categorical_, x, yw, checkpoint.h,
                               refine_iterations, options_.max_fit_points, n,
                               objective, seed);
}

CheckpointFits::Fit GpBandit::CheckpointFit(const BanditData& data, int nc,
                                            int objective,
                                            uint64_t seed) const {
  // A copy of the first nc observations: the fit may outlive `data`.
  BanditData prefix;
  prefix.x = data.x.topRows(nc);
  prefix.y = data.y.topRows(nc);
  prefix.infeasible.assign(data.infeasible.begin(),
                           data.infeasible.begin() + nc);
  return [categorical = categorical_, prefix = std::move(prefix), objective, nc,
          options = options_, seed] {
    return FitCheckpoint(categorical, prefix, objective, nc, options, seed);
  };
}

absl::StatusOr<std::vector<GaussianProcess>> GpBandit::FitObjectiveModels(
    const BanditData& data, const std::vector<Checkpoint>& checkpoints,
    const Eigen::MatrixXd& xs, const Eigen::MatrixXd& ys, uint64_t seed,
    std::vector<GpHyperparameters>* hyperparameters) const {
  std::vector<GaussianProcess> models;
  for (int m = 0; m < static_cast<int>(ys.cols()); ++m) {
    absl::StatusOr<GpHyperparameters> h =
        Hyperparameters(data, m, checkpoints[m], xs, ys.col(m), seed);
    if (!h.ok()) return h.status();
    absl::StatusOr<GaussianProcess> gp =
        GaussianProcess::Create(categorical_, xs, ys.col(m), *h);
    if (!gp.ok()) return gp.status();
    // Pending points only shrink the variance; a failure to condition on
    // them (degenerate duplicates) still leaves duplicates forbidden.
    (void)gp->AddPendingPoints(data.pending);
    hyperparameters->push_back(*h);
    models.push_back(*std::move(gp));
  }
  return models;
}

absl::StatusOr<std::vector<Eigen::VectorXd>> GpBandit::Suggest(
    const BanditData& data, int count, uint64_t seed) {
  if (absl::Status valid = ValidateSuggestInput(data, count, space_.size());
      !valid.ok()) {
    return valid;
  }
  Outcome outcome;
  if (data.x.rows() < num_initial_points()) {
    outcome = FallBack(data, count, seed);  // The initial design: no model.
  } else if (options_.suggest_deadline_seconds <= 0) {
    RunAtLowerPriority(options_.suggest_nice,
                       [&] { outcome = SuggestHere(data, count, seed); });
  } else {
    // The computation owns a copy of the data and its result: past the
    // deadline it outlives this call.
    auto shared = std::make_shared<Outcome>();
    const bool in_time = worker_->Run(
        [this, shared, data, count, seed] {
          *shared = SuggestHere(data, count, seed);
        },
        absl::Now() + absl::Seconds(options_.suggest_deadline_seconds));
    outcome = in_time ? std::move(*shared)
                      : FallBack(data, count, seed, kDeadlineKind);
  }
  last_kinds_ = std::move(outcome.kinds);
  last_hyperparameters_ = std::move(outcome.hyperparameters);
  return std::move(outcome.points);
}

GpBandit::Outcome GpBandit::SuggestHere(const BanditData& data, int count,
                                        uint64_t seed) const {
  const Eigen::Index n = data.x.rows();
  if (n < num_initial_points()) return FallBack(data, count, seed);
  std::vector<Checkpoint> checkpoints;
  std::vector<GpHyperparameters> warps;
  for (int m = 0; m < static_cast<int>(data.y.cols()); ++m) {
    absl::StatusOr<Checkpoint> c = CheckpointHyperparameters(data, m, seed);
    if (!c.ok()) return FallBack(data, count, seed);
    warps.push_back(c->h);
    checkpoints.push_back(*std::move(c));
  }
  const ModelRows model =
      SelectModelRows(data, warps, options_.max_model_points, seed);
  Outcome out;
  absl::StatusOr<std::vector<GaussianProcess>> models = FitObjectiveModels(
      data, checkpoints, model.x, model.y, seed, &out.hyperparameters);
  if (!models.ok()) return FallBack(data, count, seed);
  out.points = ChooseBatch(options_, space_, categorical_, data, model,
                           *std::move(models), out.hyperparameters[0], count,
                           seed, &out.kinds);
  return out;
}

}  // namespace cairn::gp
