// Power warping of objective values whose scale spans decades: a Box-Cox
// transform of the gaps to the best value, its power chosen from the data.
#ifndef CAIRN_TUNER_GP_POWER_WARP_H_
#define CAIRN_TUNER_GP_POWER_WARP_H_

#include <vector>

namespace cairn::gp {

// The powers PowerWarp chooses from, identity (1) first. 0 means log.
inline constexpr double kPowerWarpLambdas[] = {1.0, 0.75, 0.5, 0.25, 0.0};

// Chooses a Box-Cox power for `values` (maximize orientation) and returns
// the warped values, each finite and in the same order (a strictly
// increasing map). The transform acts on the gaps to the best value,
// s = max(values) - v + c, where the shift c
// is the lower quartile of the positive gaps (the best quarter keeps nearly
// its linear shape, so the smooth bottom of a well-scaled objective stays
// smooth; the rest is compressed); the warped value is
// -BoxCox(s, lambda). Lambda maximizes the Box-Cox profile log-likelihood
// over kPowerWarpLambdas of the better half of s (the output warp
// rank-warps the worse half anyway), so values that are roughly normal
// keep lambda = 1 (an affine map), and values whose gaps span decades
// (steep bowls: x^4, products, exponentials) get a power near 0 (log),
// which turns a spike at the optimum into a smooth peak a GP can model.
// Whether the GP uses the result is decided by its likelihood (see
// "Output power warp" in gp_bandit.h).
// Fewer than 3 distinct values are returned unchanged. Sets *lambda (if not
// null) to the chosen power, 1 when unchanged, and *log_slopes (if not null)
// to the log of each warped value's derivative with respect to its input
// (0 when unchanged), for the Jacobian of a likelihood comparison.
// REQUIRES: every value is finite.
std::vector<double> PowerWarp(const std::vector<double>& values,
                              double* lambda = nullptr,
                              std::vector<double>* log_slopes = nullptr);

// The Box-Cox profile log-likelihood of positive `s` at power `lambda`
// (up to a constant): -n/2 log(variance of BoxCox(s)) + (lambda - 1) *
// sum(log s). REQUIRES: every s > 0, s.size() >= 2.
double BoxCoxLogLikelihood(const std::vector<double>& s, double lambda);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_POWER_WARP_H_
