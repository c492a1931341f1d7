// The acquisition step of GpBandit::Suggest (see gp_bandit_acquisition.h).
#include "tuner/gp/gp_bandit_acquisition.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "tuner/gp/acquisition_optimizer.h"
#include "tuner/gp/boundary_slopes.h"
#include "tuner/gp/pareto.h"
#include "tuner/gp/rows.h"

namespace cairn::gp {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

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

// Positions (in the model rows) of the feasible observations.
std::vector<int> FeasibleModelRows(const BanditData& data,
                                   const std::vector<int>& rows) {
  std::vector<int> feasible;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!data.infeasible[rows[i]] && data.y.row(rows[i]).allFinite()) {
      feasible.push_back(static_cast<int>(i));
    }
  }
  return feasible;
}

// GP regression on 1 (feasible) / 0 (infeasible) labels centered on their
// mean; candidates predicted more likely infeasible than feasible rank after
// the others.
struct FeasibilityModel {
  std::optional<GaussianProcess> gp;  // Absent when all rows are feasible.
  double feasible_share = 1.0;        // The labels' mean.
};

// A short fit of the label GP, warm-started from the first objective's
// hyperparameters `objective` rescaled to the labels' variance.
std::optional<GaussianProcess> FitLabelGp(const CategoricalMask& categorical,
                                          const Eigen::MatrixXd& xs,
                                          const Eigen::VectorXd& centered,
                                          double feasible_share,
                                          const GpHyperparameters& objective,
                                          int max_fit_points, Eigen::Index n,
                                          uint64_t seed) {
  GpHyperparameters hf = objective;
  hf.log_signal_variance =
      std::log(std::max(feasible_share * (1 - feasible_share), 1e-2));
  hf.log_noise_variance = hf.log_signal_variance + std::log(1e-2);
  const std::vector<int> fit_rows =
      SelectRows(centered, max_fit_points, 0.0, MixSeed(seed, n, 4));
  GpFitOptions fit;
  fit.num_random_restarts = 0;
  fit.start_from_prior_mode = false;
  fit.max_iterations = 20;
  absl::StatusOr<GpHyperparameters> fitted = FitHyperparameters(
      categorical, Rows(xs, fit_rows), Rows(centered, fit_rows).col(0), fit,
      MixSeed(seed, n, 5), &hf);
  if (fitted.ok()) hf = *fitted;
  absl::StatusOr<GaussianProcess> f =
      GaussianProcess::Create(categorical, xs, centered, hf);
  if (!f.ok()) return std::nullopt;
  return *std::move(f);
}

FeasibilityModel FitFeasibilityModel(const CategoricalMask& categorical,
                                     const BanditData& data,
                                     const ModelRows& model,
                                     const GpHyperparameters& objective,
                                     int max_fit_points, uint64_t seed) {
  FeasibilityModel feasibility;
  Eigen::VectorXd labels(static_cast<Eigen::Index>(model.rows.size()));
  for (size_t i = 0; i < model.rows.size(); ++i) {
    labels[i] = data.infeasible[model.rows[i]] ? 0.0 : 1.0;
  }
  feasibility.feasible_share = labels.mean();
  if (feasibility.feasible_share < 1.0) {
    const Eigen::VectorXd centered =
        labels.array() - feasibility.feasible_share;
    feasibility.gp =
        FitLabelGp(categorical, model.x, centered, feasibility.feasible_share,
                   objective, max_fit_points, data.x.rows(), seed);
  }
  return feasibility;
}

// Several objectives: random hypervolume scalarizations relative to the
// observed front.
struct Scalarizations {
  Eigen::MatrixXd weights;    // One direction per row.
  Eigen::VectorXd reference;  // Just below the worst feasible values.
  Eigen::VectorXd best;       // Per weight: best observed scalarization.
};

Scalarizations MakeScalarizations(const Eigen::MatrixXd& ys,
                                  const std::vector<int>& feasible,
                                  int num_scalarizations, Rng& rng) {
  const int num_obj = static_cast<int>(ys.cols());
  Scalarizations sc;
  sc.weights = RandomScalarizationWeights(num_scalarizations, num_obj, rng);
  sc.reference = Eigen::VectorXd::Constant(num_obj, -1.0);
  if (!feasible.empty()) {
    for (int m = 0; m < num_obj; ++m) {
      double lo = std::numeric_limits<double>::infinity();
      for (int i : feasible) lo = std::min(lo, ys(i, m));
      sc.reference[m] = lo - 0.1;
    }
  }
  sc.best = Eigen::VectorXd::Zero(sc.weights.rows());
  for (Eigen::Index k = 0; k < sc.weights.rows(); ++k) {
    for (int i : feasible) {
      sc.best[k] = std::max(sc.best[k], HypervolumeScalarization(
                                            ys.row(i).transpose(), sc.reference,
                                            sc.weights.row(k).transpose()));
    }
  }
  return sc;
}

// Single objective: PE's promising region is UCB >= the best lower bound at
// an observed point.
double LcbThreshold(const GaussianProcess& model, const Eigen::MatrixXd& xs,
                    double beta) {
  Eigen::VectorXd mu, var;
  model.Predict(xs, &mu, &var);
  return (mu.array() - beta * var.array().sqrt()).maxCoeff();
}

// The trust region over the continuous (non-grid) dimensions.
struct TrustRegion {
  double radius = std::numeric_limits<double>::infinity();
  std::vector<int> dims;

  // Max-norm distance (over `dims`) of candidate row i to the nearest center.
  double Distance(const Eigen::MatrixXd& cand, Eigen::Index i,
                  const Eigen::MatrixXd& centers) const {
    double dist = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < centers.rows(); ++j) {
      double dj = 0.0;
      for (int d : dims) {
        dj = std::max(dj, std::abs(cand(i, d) - centers(j, d)));
      }
      dist = std::min(dist, dj);
    }
    return dist;
  }
};

TrustRegion MakeTrustRegion(const MixedSpace& space, bool use_trust_region,
                            Eigen::Index n) {
  TrustRegion region;
  for (int d = 0; d < space.size(); ++d) {
    if (!space.IsCategorical(d) && space.dim(d).grid.empty()) {
      region.dims.push_back(d);
    }
  }
  if (use_trust_region && !region.dims.empty()) {
    region.radius = TrustRegionRadius(static_cast<int>(n), space.size());
  }
  return region;
}

// Completed trials (in data order) since the best feasible value of the
// single objective last improved by more than `min_improvement` standard
// deviations of the feasible values; -1 with several objectives or fewer
// than 2 feasible. *best is the incumbent's row.
int StalledTrials(const BanditData& data, double min_improvement,
                  Eigen::Index* best) {
  if (data.y.cols() != 1) return -1;
  std::vector<double> feasible;
  for (Eigen::Index i = 0; i < data.x.rows(); ++i) {
    if (!data.infeasible[i] && std::isfinite(data.y(i, 0))) {
      feasible.push_back(data.y(i, 0));
    }
  }
  if (feasible.size() < 2) return -1;
  const Eigen::Map<const Eigen::VectorXd> f(
      feasible.data(), static_cast<Eigen::Index>(feasible.size()));
  const double tolerance =
      min_improvement * std::sqrt((f.array() - f.mean()).square().mean());
  int stalled = -1;
  double best_y = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < data.x.rows(); ++i) {
    const bool usable = !data.infeasible[i] && std::isfinite(data.y(i, 0));
    if (usable && data.y(i, 0) > best_y + tolerance) {
      stalled = 0;
    } else if (stalled >= 0) {
      ++stalled;
    }
    if (usable && data.y(i, 0) > best_y) {
      best_y = data.y(i, 0);
      *best = i;
    }
  }
  return stalled;
}

// Whether this Suggest is a restart (see
// GpBanditOptions::restart_after_stalled_trials); *incumbent: the best
// point, as a 1 x D matrix.
bool IsRestart(const GpBanditOptions& options, const BanditData& data,
               Eigen::MatrixXd* incumbent) {
  const int every = options.restart_after_stalled_trials;
  if (every <= 0) return false;
  Eigen::Index best = 0;
  const int stalled =
      StalledTrials(data, options.restart_min_improvement, &best);
  if (stalled < every || stalled % every != 0) return false;
  *incumbent = data.x.row(best);
  return true;
}

// Optimizer seeds: the (at most 5) best feasible observed points.
Eigen::MatrixXd BestPoints(const ModelRows& model,
                           const std::vector<int>& feasible) {
  std::vector<int> order(feasible);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return model.y.row(a).mean() > model.y.row(b).mean();
  });
  order.resize(std::min<size_t>(order.size(), 5));
  return Rows(model.x, order);
}

// The acquisition budget, shrunk in proportion past
// full_acquisition_budget_trials completed trials.
AcquisitionOptimizerOptions AcquisitionBudget(const GpBanditOptions& options,
                                              Eigen::Index n) {
  AcquisitionOptimizerOptions acquisition = options.acquisition;
  if (n > options.full_acquisition_budget_trials) {
    acquisition.max_evaluations = std::max(
        std::min(options.min_acquisition_evaluations,
                 acquisition.max_evaluations),
        static_cast<int>(static_cast<double>(acquisition.max_evaluations) *
                         options.full_acquisition_budget_trials / n));
  }
  return acquisition;
}

// Everything the acquisition function of one Suggest needs. The models and
// `forbidden` grow by each chosen batch member.
struct AcquisitionState {
  AcquisitionState(const BanditData& data, std::vector<GaussianProcess> gps)
      : models(std::move(gps)),
        centers(data.x),
        completed(data.x),
        forbidden(data.pending) {
    if (forbidden.rows() == 0) forbidden.resize(0, data.x.cols());
  }

  std::vector<GaussianProcess> models;  // One per objective.
  FeasibilityModel feasibility;
  double beta = 0.0;  // The UCB coefficient.
  double min_relative_variance = 0.0;
  double lcb_threshold = kNegInf;  // Single objective only.
  Scalarizations scalarizations;   // Several objectives only.
  TrustRegion trust_region;
  // A restart: the incumbent (best feasible observed point, 1 x D) whose
  // neighbourhood is avoided; empty otherwise.
  Eigen::MatrixXd avoid_center;
  double avoid_radius = 0.0;
  const Eigen::MatrixXd& centers;  // The trust region's: completed points.
  PointSet completed;              // Avoided.
  Eigen::MatrixXd forbidden;       // Pending and chosen points: never chosen.
  Eigen::MatrixXd seeds;           // Optimizer seeds.
  AcquisitionOptimizerOptions acquisition;
};

// The models' view of a batch of candidates.
struct CandidatePosterior {
  Eigen::MatrixXd ucb;            // Per candidate and objective.
  Eigen::VectorXd total_var;      // Summed posterior variance.
  Eigen::VectorXd relative_var;   // Mean variance / signal variance.
  Eigen::VectorXd feasible_mean;  // Empty without a feasibility model.
};

CandidatePosterior Posterior(const AcquisitionState& state,
                             const Eigen::MatrixXd& cand) {
  const Eigen::Index c = cand.rows();
  const int num_obj = static_cast<int>(state.models.size());
  CandidatePosterior p;
  p.ucb.resize(c, num_obj);
  p.total_var = Eigen::VectorXd::Zero(c);
  p.relative_var = Eigen::VectorXd::Zero(c);
  for (int m = 0; m < num_obj; ++m) {
    Eigen::VectorXd mu, var;
    state.models[m].Predict(cand, &mu, &var);
    p.ucb.col(m) = mu.array() + state.beta * var.array().sqrt();
    p.total_var += var;
    p.relative_var +=
        var / (num_obj *
               std::exp(state.models[m].hyperparameters().log_signal_variance));
  }
  if (state.feasibility.gp.has_value()) {
    state.feasibility.gp->Predict(cand, &p.feasible_mean, nullptr);
  }
  return p;
}

// Mean hypervolume-scalarized improvement of `ucb` over the observed front
// (plus a small share of the mean level, to break ties); *improves tells
// whether any scalarization improves.
double ScalarizedImprovement(const Scalarizations& sc,
                             const Eigen::VectorXd& ucb, double* improves) {
  double improvement = 0.0, level = 0.0;
  for (Eigen::Index k = 0; k < sc.weights.rows(); ++k) {
    const double sk = HypervolumeScalarization(ucb, sc.reference,
                                               sc.weights.row(k).transpose());
    improvement += std::max(0.0, sk - sc.best[k]);
    level += sk;
  }
  *improves = improvement > 0.0;
  return (improvement + 1e-6 * level) / sc.weights.rows();
}

// The acquisition value of each candidate and whether it lies in PE's
// promising region (1.0) or not (0.0).
void Acquisition(const AcquisitionState& state, const Eigen::MatrixXd& ucb,
                 Eigen::VectorXd* acq, Eigen::VectorXd* improves) {
  const Eigen::Index c = ucb.rows();
  acq->resize(c);
  improves->resize(c);
  for (Eigen::Index i = 0; i < c; ++i) {
    if (state.models.size() == 1) {
      (*acq)[i] = ucb(i, 0);
      (*improves)[i] = (*acq)[i] >= state.lcb_threshold;
    } else {
      (*acq)[i] = ScalarizedImprovement(
          state.scalarizations, ucb.row(i).transpose(), &(*improves)[i]);
    }
  }
}

// Score `v` of candidate row i after the penalties: near-duplicates of
// observations and likely infeasible points rank after the others, points
// outside the trust region after those, completed points after those, and
// forbidden points are -infinity.
double Penalized(const AcquisitionState& state, const CandidatePosterior& p,
                 const Eigen::MatrixXd& cand, Eigen::Index i, double v) {
  if (p.relative_var[i] < state.min_relative_variance) v -= 1e3;
  if (state.feasibility.gp.has_value() &&
      p.feasible_mean[i] + state.feasibility.feasible_share < 0.5) {
    v -= 1e3;
  }
  if (state.avoid_center.rows() > 0 &&
      state.trust_region.Distance(cand, i, state.avoid_center) <
          state.avoid_radius) {
    v -= 1e3;
  }
  if (std::isfinite(state.trust_region.radius)) {
    const double dist = state.trust_region.Distance(cand, i, state.centers);
    if (dist > state.trust_region.radius) v = -1e9 - dist;
  }
  if (state.completed.Contains(cand.row(i))) v = -1e12;
  if (ContainsRow(state.forbidden, cand.row(i))) v = kNegInf;
  return std::isnan(v) ? kNegInf : v;
}

// The BatchScoreFn of a batch member: UCB for the first, posterior variance
// inside the promising region for later ones (pure exploration).
void ScoreCandidates(const AcquisitionState& state, bool pure_exploration,
                     const Eigen::MatrixXd& cand, Eigen::VectorXd* s) {
  const CandidatePosterior p = Posterior(state, cand);
  Eigen::VectorXd acq, improves;
  Acquisition(state, p.ucb, &acq, &improves);
  s->resize(cand.rows());
  for (Eigen::Index i = 0; i < cand.rows(); ++i) {
    double v = acq[i];
    if (pure_exploration) {
      v = improves[i] > 0.0 ? p.total_var[i] : -1e6 + acq[i];
    }
    (*s)[i] = Penalized(state, p, cand, i, v);
  }
}

// Conditions every model on virtual slopes at x's projections onto `faces`
// (boundary_slopes.h); a model that cannot take them stays as it was.
void AddBoundarySlopes(const Eigen::VectorXd& x, const std::vector<Face>& faces,
                       AcquisitionState& state) {
  for (GaussianProcess& gp : state.models) {
    absl::StatusOr<GaussianProcess> bent =
        gp.WithSlopes(BoundarySlopes(gp.hyperparameters(), x, faces));
    if (bent.ok()) gp = *std::move(bent);
  }
}

// Maximizes the acquisition of one batch member, bending the models away
// from the faces the argmax lies on for up to options.boundary_rounds
// rounds (boundary_slopes.h); when everything the search saw was
// forbidden, tries random points. Nullopt when the space is exhausted.
std::optional<Eigen::VectorXd> ChooseBatchMember(const GpBanditOptions& options,
                                                 const MixedSpace& space,
                                                 AcquisitionState& state,
                                                 bool pure_exploration,
                                                 Rng& rng) {
  BatchScoreFn score = [&](const Eigen::MatrixXd& cand, Eigen::VectorXd* s) {
    ScoreCandidates(state, pure_exploration, cand, s);
  };
  AcquisitionResult best;
  for (int round = 0;; ++round) {
    best =
        MaximizeAcquisition(space, score, state.seeds, state.centers,
                            state.trust_region.radius, state.acquisition, rng);
    if (best.x.size() == 0 || round >= options.boundary_rounds) break;
    const std::vector<Face> faces =
        BoundaryFaces(space, best.x, options.boundary_margin);
    if (faces.empty()) break;
    AddBoundarySlopes(best.x, faces, state);
  }
  if (best.x.size() > 0) return best.x;
  for (int tries = 0; tries < 2000; ++tries) {
    Eigen::VectorXd x = space.Sample(rng);
    if (!ContainsRow(state.forbidden, x.transpose())) return x;
  }
  return std::nullopt;
}

// Treats a chosen batch member as pending for the next ones.
void AddChosen(const Eigen::VectorXd& x, AcquisitionState& state) {
  AppendRow(state.forbidden, x);
  for (GaussianProcess& gp : state.models) {
    (void)gp.AddPendingPoints(x.transpose());
  }
}

// The acquisition state of one Suggest on the fitted objective `models`;
// `first` holds the first objective's hyperparameters.
AcquisitionState MakeAcquisitionState(
    const GpBanditOptions& options, const MixedSpace& space,
    const CategoricalMask& categorical, const BanditData& data,
    const ModelRows& model, std::vector<GaussianProcess> models,
    const GpHyperparameters& first, uint64_t seed) {
  AcquisitionState state(data, std::move(models));
  if (options.use_feasibility_model) {
    state.feasibility = FitFeasibilityModel(categorical, data, model, first,
                                            options.max_fit_points, seed);
  }
  state.beta = options.ucb_coefficient;
  state.min_relative_variance = options.min_relative_variance;
  const std::vector<int> feasible = FeasibleModelRows(data, model.rows);
  if (model.y.cols() == 1) {
    state.lcb_threshold = LcbThreshold(state.models[0], model.x, state.beta);
  }
  Rng weight_rng(MixSeed(seed, static_cast<uint64_t>(data.num_trials), 0x3E));
  if (model.y.cols() > 1) {
    state.scalarizations = MakeScalarizations(
        model.y, feasible, options.num_scalarizations, weight_rng);
  }
  const Eigen::Index n = data.x.rows();
  state.trust_region = MakeTrustRegion(space, options.use_trust_region, n);
  if (IsRestart(options, data, &state.avoid_center)) {
    state.trust_region.radius = std::numeric_limits<double>::infinity();
    state.avoid_radius = options.restart_exclusion_radius;
  }
  state.seeds = BestPoints(model, feasible);
  state.acquisition = AcquisitionBudget(options, n);
  return state;
}

// GP-UCB-PE: chooses up to `count` points, each treated as pending for the
// next (later members search with batch_member_budget_fraction of the
// budget), and appends how each was chosen to `kinds`.
std::vector<Eigen::VectorXd> ChooseBatchMembers(
    const GpBanditOptions& options, const MixedSpace& space,
    const BanditData& data, int count, uint64_t seed, AcquisitionState& state,
    std::vector<std::string>* kinds) {
  const Eigen::Index n = data.x.rows();
  std::vector<Eigen::VectorXd> out;
  for (int b = 0; b < count; ++b) {
    const bool pure_exploration = b > 0;
    if (b == 1) {
      state.acquisition.max_evaluations =
          static_cast<int>(state.acquisition.max_evaluations *
                           options.batch_member_budget_fraction);
    }
    Rng rng(MixSeed(seed, static_cast<uint64_t>(data.num_trials) * 4099 + n,
                    0xAC0 + b));
    std::optional<Eigen::VectorXd> x =
        ChooseBatchMember(options, space, state, pure_exploration, rng);
    if (!x.has_value()) break;  // The space is exhausted.
    out.push_back(*x);
    kinds->push_back(pure_exploration                ? "pure_exploration"
                     : state.avoid_center.rows() > 0 ? "restart"
                                                     : "ucb");
    AddChosen(*x, state);
  }
  return out;
}

}  // namespace

std::vector<Eigen::VectorXd> ChooseBatch(
    const GpBanditOptions& options, const MixedSpace& space,
    const CategoricalMask& categorical, const BanditData& data,
    const ModelRows& model, std::vector<GaussianProcess> models,
    const GpHyperparameters& first, int count, uint64_t seed,
    std::vector<std::string>* kinds) {
  AcquisitionState state = MakeAcquisitionState(
      options, space, categorical, data, model, std::move(models), first, seed);
  return ChooseBatchMembers(options, space, data, count, seed, state, kinds);
}

}  // namespace cairn::gp
