// Maximizes a batched acquisition function over a mixed space with a
// firefly-style evolutionary search whose mutation scale decays, so its late
// generations act as a local refinement. Integer/discrete values are snapped,
// categories mutated, and conditional children canonicalized.
#ifndef CAIRN_TUNER_GP_ACQUISITION_OPTIMIZER_H_
#define CAIRN_TUNER_GP_ACQUISITION_OPTIMIZER_H_

#include <functional>

#include "Eigen/Core"
#include "tuner/gp/mixed_space.h"

namespace cairn::gp {

// Scores the rows of `candidates` (canonical points); higher is better.
// -infinity marks a forbidden point.
using BatchScoreFn = std::function<void(const Eigen::MatrixXd& candidates,
                                        Eigen::VectorXd* scores)>;

// Vizier's trust region: an L-infinity ball of this radius around observed
// points (in the continuous dimensions); no region (returns +inf) once the
// radius passes 0.5.
double TrustRegionRadius(int num_observed, int num_dims);

struct AcquisitionOptimizerOptions {
  // Total acquisition evaluations (including the initial pool).
  int max_evaluations = 4000;
  // Share of evaluations spent on the initial random pool.
  double initial_fraction = 0.3;
  // Members evolved per generation.
  int population = 40;
  // Mutation scale (unit-cube units) of the first and last generation.
  double initial_sigma = 0.15;
  double final_sigma = 0.002;
  // Probability that a categorical or grid dimension jumps to a random value.
  double jump_probability = 0.1;
};

struct AcquisitionResult {
  Eigen::VectorXd x;  // Empty when every candidate was forbidden.
  double score = 0.0;
  int evaluations = 0;
};

// Maximizes `score` over canonical points of `space`. `seeds` (rows,
// canonical) are perturbed to populate part of the initial pool (e.g. the best
// observed points). When `trust_centers` is non-empty and `trust_radius` is
// finite, random candidates are drawn inside the trust region (the score
// function is expected to enforce it). Deterministic for `rng`'s state.
AcquisitionResult MaximizeAcquisition(
    const MixedSpace& space, const BatchScoreFn& score,
    const Eigen::MatrixXd& seeds, const Eigen::MatrixXd& trust_centers,
    double trust_radius, const AcquisitionOptimizerOptions& options, Rng& rng);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_ACQUISITION_OPTIMIZER_H_
