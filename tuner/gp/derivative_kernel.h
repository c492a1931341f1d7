// Covariances of the Matern-5/2 ARD kernel (gaussian_process.h) with
// partial derivatives of the function: what a GP needs to condition on
// observations of a slope, such as the virtual boundary observations of
// boundary_derivatives.h. With k(a, b) = s2 (1 + sqrt5 r + 5/3 r^2)
// exp(-sqrt5 r) and g(r) = (1 + sqrt5 r) exp(-sqrt5 r):
//   cov(f(a), df(b)/db_d)        = s2 5/3 g(r) (a_d - b_d) / l_d^2
//   cov(df(a)/da_i, df(b)/db_j)  = s2 5/3 (g(r) [i == j] / l_i^2
//                                  - 5 exp(-sqrt5 r) (a_i - b_i)(a_j - b_j)
//                                    / (l_i^2 l_j^2))
// The kernel is twice differentiable, so both are finite everywhere (at
// r = 0 the second is s2 5/3 / l_i^2 for i == j, the slope's prior
// variance). Derivatives are taken along continuous dimensions only;
// categorical dimensions still enter r through their overlap distance.
#ifndef CAIRN_TUNER_GP_DERIVATIVE_KERNEL_H_
#define CAIRN_TUNER_GP_DERIVATIVE_KERNEL_H_

#include <vector>

#include "Eigen/Core"
#include "tuner/gp/gaussian_process.h"

namespace cairn::gp {

// SlopePoint (gaussian_process.h): a derivative along one dimension at
// one point.
// cov(df(slopes[j].x)/dx_dim, f(b_i)): slopes.size() x b.rows().
Eigen::MatrixXd SlopeValueCovariance(const CategoricalMask& categorical,
                                     const std::vector<SlopePoint>& slopes,
                                     const Eigen::MatrixXd& b,
                                     const GpHyperparameters& h);

// cov(slope j, slope k): slopes.size() x slopes.size().
Eigen::MatrixXd SlopeSlopeCovariance(const CategoricalMask& categorical,
                                     const std::vector<SlopePoint>& slopes,
                                     const GpHyperparameters& h);

// The prior standard deviation of a slope along `dim`: sqrt(s2 5/3) / l_dim.
double SlopePriorSd(const GpHyperparameters& h, int dim);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_DERIVATIVE_KERNEL_H_
