// Multi-objective utilities: Pareto front, 2-D hypervolume and Vizier's
// random hypervolume scalarizations.
#ifndef CAIRN_TUNER_GP_PARETO_H_
#define CAIRN_TUNER_GP_PARETO_H_

#include <vector>

#include "Eigen/Core"
#include "tuner/gp/mixed_space.h"

namespace cairn::gp {

// Indices (ascending) of the rows of `points` not dominated by another row,
// every column maximized. Row a dominates b when a >= b everywhere and
// a > b somewhere; equal rows do not dominate each other (both are kept).
// Rows with a non-finite entry are never on the front. O(n^2 m).
std::vector<int> ParetoFrontIndices(const Eigen::MatrixXd& points);

// Area dominated by the rows of `points` (2 columns, maximized) and bounded
// below by `reference`; points not strictly above the reference in both
// coordinates contribute nothing. REQUIRES: points.cols() == 2.
double Hypervolume2D(const Eigen::MatrixXd& points,
                     const Eigen::Vector2d& reference);

// num_weights random directions on the positive part of the unit sphere
// (|Gaussian| draws, normalized), one per row.
Eigen::MatrixXd RandomScalarizationWeights(int num_weights, int num_objectives,
                                           Rng& rng);

// Hypervolume scalarization s_w(y) = min_i (max(0, y_i - r_i) / w_i)^m with
// m = y.size() (Golovin & Zhang 2020): the hypervolume dominated by a set is
// proportional to the mean over random w of max over the set of s_w.
double HypervolumeScalarization(const Eigen::VectorXd& y,
                                const Eigen::VectorXd& reference,
                                const Eigen::VectorXd& weight);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_PARETO_H_
