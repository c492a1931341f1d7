// GP bandit engine on the mixed unit cube: given completed points (with one
// or more objectives, or infeasible), pending points and a seed, proposes a
// batch of new points. The Designer in tuner/gp_bandit_designer.h maps trials
// to and from this representation.
//
// Algorithm:
//  - Initial design: the center, then a scrambled Halton sequence indexed by
//    the number of trials so far, until `num_initial_points` completed trials
//    exist (default: 2 per dimension, clamped to [5, 20]).
//  - Model: one GP per objective (Matern-5/2 ARD, see gaussian_process.h) on
//    half-rank-warped, standardized outputs (output_warping.h), optionally
//    power-warped first; infeasible points are imputed
//    below the worst feasible value, and a GP on feasibility labels keeps
//    the search out of regions predicted infeasible.
//  - Output power warp, for objectives whose values span decades (x^4
//    bowls, products, exponentials: on raw values the optimum is a spike
//    in a flat floor, which a stationary GP fits with short length scales
//    and then explores like random search). Each checkpoint fit also fits
//    the outputs after a Box-Cox power of the gaps to the best value
//    (power_warp.h; the power from the values' good half, identity to log)
//    and keeps that model when its marginal likelihood, with the warp's
//    Jacobian so both score the same raw values, is e^3 times higher
//    (kPowerWarpMargin in gp_bandit.cc). Chosen from the data only: the
//    objective's name or source plays no part. Between checkpoints the
//    choice stays. Costs a second fit at checkpoints where the power is
//    not 1.
//  - Acquisition: UCB (coefficient 1.0) restricted to Vizier's trust region
//    around observed points; several objectives are combined by random
//    hypervolume scalarizations (mean hypervolume-scalarized improvement of
//    the UCB vector over the observed front).
//  - Exploration on multimodal functions: the coefficient is 1.0, not
//    Vizier's 1.8. The model sees standardized, warped outputs, on which
//    more weight on the posterior standard deviation keeps the search
//    probing far, high-variance points (often on the box's boundary) long
//    after the initial design instead of refining the basins it has found.
//    The trade-off: with a long budget a larger coefficient, still
//    exploring, reaches a distant global basin more often (Styblinski-Tang
//    at 100 trials). Larger initial designs, no trust region, restarts,
//    alternating coefficients and "escape" candidates did not do better.
//    The figures are in bench/gp/README.md ("Multimodal functions: UCB
//    coefficient 1.0").
//  - The box's faces (boundary_slopes.h): a stationary GP's variance is
//    highest at faces and corners, and a trend in the data keeps its mean
//    rising up to a face, so UCB tends to put several coordinates on their
//    bounds at once. When the acquisition's argmax lies on faces, the
//    models are conditioned on virtual slopes there (the objective falls
//    towards the face) and the acquisition is maximized again, up to 3
//    rounds (after Siivola et al. 2018, virtual derivative observations).
//    Data that keep rising up to a face outweigh them, so an optimum on
//    the boundary is still reached. On LCBench this took GP_BANDIT's
//    corner suggestions from 54% to 6% (bench/lcbench/README.md).
//  - Restarts (off by default, an option): after N completed trials without
//    a real improvement, one suggestion searches the whole space away from
//    the incumbent (see GpBanditOptions::restart_after_stalled_trials), so a
//    search stuck in one basin of a multimodal function looks at others.
//  - Batches and parallel workers (GP-UCB-PE): pending trials condition the
//    posterior variance (not the mean). The first member of a batch maximizes
//    that UCB; later members maximize the posterior variance (pure
//    exploration) inside the region where UCB exceeds the best lower bound,
//    each chosen member being added as pending. Exact duplicates of pending
//    points are forbidden, of completed points avoided.
//
// Cost control (documented choices):
//  - Full hyperparameter fits (prior mode + random restarts, L-BFGS-B) run at
//    checkpoints only: every completed count up to 20, then every
//    2^floor(log2(n / 10)) trials (every 8 around n = 100, every 64 around
//    n = 1000). A checkpoint fit depends only on the first n_c completed
//    points, so it is cached yet reproducible. Between checkpoints the
//    checkpoint's hyperparameters are warm-started and refined by a few
//    L-BFGS-B iterations on the current data (8, or 4 past 50 trials).
//  - Background fits: past `background_fit_trials` (100) completed trials a
//    suggestion starts from the checkpoint *before* the current one (but
//    not before the last checkpoint at or below the threshold; still
//    refined on the current data) and the current checkpoint's full fit
//    runs on a background thread, ready for the
//    suggestions after the next checkpoint. So a suggestion pays a full
//    fit only when the designer is new (the first suggestion after cairnd
//    starts), never on a schedule. Which checkpoint a suggestion uses
//    depends only on the completed count, so results do not depend on
//    timing: a suggestion that needs a fit still running waits for it
//    (it started at least one checkpoint interval earlier). At most one
//    background fit per checkpoint and objective; Eigen runs
//    single-threaded, so a study's GP uses at most two threads.
//  - Priority: a suggestion computes on a thread at nice +10 over the
//    caller (`suggest_nice`), and the background fits it starts inherit
//    that (`background_fit_nice` adds to it, 0 by default), so cairnd's
//    request threads (GetStudy, reports, other studies) take a core from
//    GP work as soon as they wake: a suggestion and a background fit are
//    two CPU-bound threads, which on a small machine would otherwise delay
//    every request. On an idle machine suggestions cost the same; on a
//    machine saturated by other nice-0 processes (training jobs, builds)
//    GP work gets a smaller share (nice 10 weighs about a tenth of nice 0),
//    so suggestions slow down there rather than the server's requests
//    (bench/gp/README.md, "GP work at nice 10").
//  - Fits use at most `max_fit_points` points (100), the posterior at most
//    `max_model_points` (200: half the best points, half a seeded random
//    sample of the others), which bounds the Cholesky and per-candidate
//    costs: past 200 trials a suggestion costs about the same at any size.
//  - The acquisition search uses 4000 batched evaluations up to 50 completed
//    trials, then 4000 * 50 / n, at least 1000 (each costs O(m^2) for m
//    model points).
//  - Batches reuse one fit and one factorization: later members condition
//    it on the chosen points by extending the Cholesky factor (no refit),
//    and their pure-exploration search (a smoother target) uses a quarter
//    of the acquisition budget, so a batch of 8 costs less than 3 single
//    suggestions.
//
// Deterministic: the output is a function of (inputs, seed) only; the cache
// never changes results, nor does background fitting. The one exception is
// suggest_deadline_seconds > 0: whether a suggestion misses it depends on
// timing. Not thread-safe (one caller per instance; background fits and a
// computation past its deadline synchronize internally).
#ifndef CAIRN_TUNER_GP_GP_BANDIT_H_
#define CAIRN_TUNER_GP_GP_BANDIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "tuner/gp/acquisition_optimizer.h"
#include "tuner/gp/checkpoint_fits.h"
#include "tuner/gp/deadline_worker.h"
#include "tuner/gp/gaussian_process.h"
#include "tuner/gp/mixed_space.h"
#include "tuner/gp/suggestion_kinds.h"

namespace cairn::gp {

struct GpBanditOptions {
  // UCB = mean + ucb_coefficient * standard deviation (see "Exploration on
  // multimodal functions" above for why 1.0 and not Vizier's 1.8).
  double ucb_coefficient = 1.0;
  // Completed trials before the GP takes over; 0 means
  // clamp(2 * num_dims, 5, 20).
  int num_initial_points = 0;
  int max_model_points = 200;
  int max_fit_points = 100;
  // Random restarts of a checkpoint fit (fewer when it has > 100 points).
  int num_fit_restarts = 3;
  int fit_iterations = 60;
  // L-BFGS-B iterations of the between-checkpoint refinement, up to
  // full_acquisition_budget_trials completed trials and beyond.
  int refine_iterations = 8;
  int late_refine_iterations = 4;
  // Scalarization weights for several objectives.
  int num_scalarizations = 64;
  bool use_trust_region = true;
  // Restarts, for multimodal landscapes (single objective): once this many
  // completed trials in a row have not improved the best value by more than
  // `restart_min_improvement` standard deviations of the observed values,
  // and again after each further such run, the suggestion maximizes UCB
  // over the whole space (no trust region) away from the incumbent:
  // candidates within `restart_exclusion_radius` (max-norm over continuous
  // dimensions) of the best point rank after all others. 0 (the default)
  // turns restarts off: they can help one multimodal function and hurt
  // another (bench/gp/README.md has the runs).
  int restart_after_stalled_trials = 0;
  double restart_min_improvement = 0.05;
  double restart_exclusion_radius = 0.25;
  // Candidates whose posterior variance (given observed and pending points)
  // is below this fraction of the signal variance (a near-duplicate of an
  // observation, within ~0.003 length scales) are ranked after all
  // others: with little noise they would only re-measure a known value (UCB
  // otherwise keeps re-sampling its argmax on a boundary it over-trusts).
  double min_relative_variance = 1e-5;
  // With infeasible observations, a GP on feasibility labels (1/0; its
  // hyperparameters refined for 20 L-BFGS-B iterations from the first
  // objective's) ranks candidates predicted more likely infeasible than
  // feasible after all others, on top of the imputation.
  bool use_feasibility_model = true;
  // Virtual boundary slopes (boundary_slopes.h): when the acquisition's
  // argmax lies within `boundary_margin` (unit-cube units) of faces of the
  // box, the models learn that the objective falls towards those faces and
  // the acquisition is maximized again, for up to `boundary_rounds` rounds
  // (0 turns it off).
  int boundary_rounds = 3;
  double boundary_margin = 0.01;
  // Output power warp (output_warping.h, power_warp.h): off, the GP models
  // the raw values of a steep objective (x^4, a product, an exponential),
  // whose optimum is a spike it cannot resolve.
  bool power_warp = true;
  AcquisitionOptimizerOptions acquisition;
  // The acquisition budget (acquisition.max_evaluations) applies up to this
  // many completed trials; beyond, it shrinks in proportion (each evaluation
  // costs O(n^2)), down to min_acquisition_evaluations.
  int full_acquisition_budget_trials = 50;
  int min_acquisition_evaluations = 1000;
  // Share of the acquisition budget for each later (pure-exploration) batch
  // member.
  double batch_member_budget_fraction = 0.25;
  // Past this many completed trials, suggestions use the previous
  // checkpoint's fit and the current one is fitted in the background (see
  // "Background fits" above); 0 turns background fits off.
  int background_fit_trials = 100;
  // Nice increment of background fit threads over the suggesting thread
  // (0: the same priority; a suggestion may wait for one, see above).
  int background_fit_nice = 0;
  // Suggest computes on a new thread this much nicer than the caller (0:
  // on the caller's thread), so that request serving never waits for a
  // suggestion's CPU time (see low_priority.h and "Priority" above).
  int suggest_nice = 10;
  // Deadline of one Suggest, in seconds (0, the default: none). Past it,
  // Suggest returns quasi-random points (kind kDeadlineKind) and the
  // model-based computation finishes in the background: its checkpoint
  // fits are cached for the next suggestions, its points dropped. A
  // Suggest that finds that computation still running answers with
  // quasi-random points at once rather than start a second one, so a study
  // never runs two. With a deadline, results depend on timing.
  double suggest_deadline_seconds = 0;
};

// The observations. Rows of x are canonical points of the space.
struct BanditData {
  Eigen::MatrixXd x;  // n x D completed points.
  // n x M objective values in *maximize* orientation (negate minimized
  // metrics); rows of infeasible points are ignored.
  Eigen::MatrixXd y;
  std::vector<bool> infeasible;  // n entries.
  Eigen::MatrixXd pending;       // p x D points being evaluated.
  // Number of trials ever created (completed, pending, failed): indexes the
  // quasi-random initial design so parallel workers get distinct points.
  int64_t num_trials = 0;
};

class GpBandit {
 public:
  GpBandit(MixedSpace space, GpBanditOptions options = {});
  // A computation past its deadline uses this object: not copyable or
  // movable.
  GpBandit(const GpBandit&) = delete;
  GpBandit& operator=(const GpBandit&) = delete;

  // Proposes up to `count` new canonical points, deterministic for
  // (data, seed). Fewer are returned only when the space has no point left
  // that differs from the pending ones. InvalidArgument on inconsistent
  // shapes; model failures fall back to quasi-random points, never abort.
  absl::StatusOr<std::vector<Eigen::VectorXd>> Suggest(const BanditData& data,
                                                       int count,
                                                       uint64_t seed);

  const MixedSpace& space() const { return space_; }
  int num_initial_points() const;

  // How each point of the last Suggest was chosen: "quasi_random", "ucb",
  // "restart", "pure_exploration" (later batch members) or kDeadlineKind,
  // in output order.
  const std::vector<std::string>& last_kinds() const { return last_kinds_; }

  // Hyperparameters used by the last model-based Suggest (per objective).
  const std::vector<GpHyperparameters>& last_hyperparameters() const {
    return last_hyperparameters_;
  }

  // Checkpoint fits run by Suggest itself and started in the background.
  int foreground_fits() const { return fits_->foreground_fits(); }
  int background_fits() const { return fits_->background_fits(); }
  void WaitForBackgroundFits() const { fits_->WaitForBackgroundFits(); }
  // Waits for a suggestion still computing past its deadline (tests).
  void TEST_WaitForSuggestion() { worker_->Wait(); }

 private:
  // A checkpoint's fit (its output_power_warp says how to warp the
  // objective) and the completed count it was fitted on.
  struct Checkpoint {
    GpHyperparameters h;
    int nc = 0;
  };
  // The checkpoint fit a suggestion on `data` uses for `objective`
  // (computed, cached, or from the background; see "Cost control").
  absl::StatusOr<Checkpoint> CheckpointHyperparameters(const BanditData& data,
                                                       int objective,
                                                       uint64_t seed) const;
  // The checkpoint's hyperparameters, refined on the model rows (x, warped
  // yw) when the checkpoint is older than the data.
  absl::StatusOr<GpHyperparameters> Hyperparameters(
      const BanditData& data, int objective, const Checkpoint& checkpoint,
      const Eigen::MatrixXd& x, const Eigen::VectorXd& yw, uint64_t seed) const;
  // What one suggestion computed: the points (or an error), how each was
  // chosen, and the hyperparameters of a model-based one.
  struct Outcome {
    absl::StatusOr<std::vector<Eigen::VectorXd>> points;
    std::vector<std::string> kinds;
    std::vector<GpHyperparameters> hyperparameters;
  };
  // Suggest's computation, on the calling thread. Const: it may run on a
  // worker past its deadline while the next Suggest runs.
  Outcome SuggestHere(const BanditData& data, int count, uint64_t seed) const;
  // The full fit of the checkpoint on the first `nc` completed points, as a
  // closure owning copies of what it needs (it may run in the background).
  CheckpointFits::Fit CheckpointFit(const BanditData& data, int nc,
                                    int objective, uint64_t seed) const;
  // One GP per objective on the model rows (xs, warped ys), conditioned on
  // the pending points; appends their hyperparameters to *hyperparameters.
  // Fails when a fit or a Cholesky factorization does.
  absl::StatusOr<std::vector<GaussianProcess>> FitObjectiveModels(
      const BanditData& data, const std::vector<Checkpoint>& checkpoints,
      const Eigen::MatrixXd& xs, const Eigen::MatrixXd& ys, uint64_t seed,
      std::vector<GpHyperparameters>* hyperparameters) const;
  // QuasiRandom points, each of kind `kind`.
  Outcome FallBack(const BanditData& data, int count, uint64_t seed,
                   const std::string& kind = "quasi_random") const;
  std::vector<Eigen::VectorXd> QuasiRandom(const BanditData& data, int count,
                                           uint64_t seed) const;

  MixedSpace space_;
  GpBanditOptions options_;
  CategoricalMask categorical_;
  // Shared with background fits; heap-allocated so GpBandit stays movable.
  std::unique_ptr<CheckpointFits> fits_;
  std::vector<GpHyperparameters> last_hyperparameters_;
  std::vector<std::string> last_kinds_;
  // Runs suggestions with a deadline; declared last so that it is destroyed
  // (waiting for a computation still running) before what that uses.
  std::unique_ptr<DeadlineWorker> worker_;
};

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_GP_BANDIT_H_
