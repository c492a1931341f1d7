// Output warping: turns raw objective values into well-behaved GP targets.
#ifndef CAIRN_TUNER_GP_OUTPUT_WARPING_H_
#define CAIRN_TUNER_GP_OUTPUT_WARPING_H_

#include <vector>

#include "Eigen/Core"

namespace cairn::gp {

// Warps objective values for a GP, in "maximize" orientation (callers negate
// values of minimized metrics first). Steps:
//  0. With `power_warp`, a Box-Cox power of the gaps to the best value,
//     chosen from the data (see power_warp.h): identity for well-scaled
//     values, up to a log for values spanning decades (steep bowls).
//  1. Half-rank warp (after Vizier's output warper): values at or above the
//  feasible median keep their
//     value; a value v below it becomes max(v, median + s * Phi^-1(q)) with
//     q its rank quantile and s the spread of the good half. Bad outliers
//     thus cannot dominate the fit, while the good half keeps its shape.
//  2. Standardize to zero mean and unit variance over feasible values.
//  3. Infeasible entries (infeasible[i] or a non-finite value) get the worst
//     warped feasible value minus 0.5, so their region looks unattractive.
// With no feasible value all outputs are 0 (a flat GP: pure exploration).
// `log_slopes` (optional) receives, per entry, the log of the derivative of
// the output with respect to the value where the value is kept by step 1
// (the good half and bad values above their quantile), NaN elsewhere: with
// a GP's log marginal likelihood on the outputs, its sum over the modelled
// rows compares warps as densities of the same values.
// REQUIRES: infeasible.size() == values.size().
Eigen::VectorXd WarpObjective(const Eigen::VectorXd& values,
                              const std::vector<bool>& infeasible,
                              bool power_warp = true,
                              Eigen::VectorXd* log_slopes = nullptr);

// Inverse of the standard normal CDF, p in (0, 1) (Acklam's approximation
// refined by one Halley step; absolute error < 1e-12).
double NormalQuantile(double p);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_OUTPUT_WARPING_H_
