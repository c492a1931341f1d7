// Gaussian-process regression on the mixed unit cube: Matern-5/2 ARD kernel
// (an overlap distance for categorical dimensions), log marginal likelihood
// with its analytic gradient, hyperparameter fitting by L-BFGS-B with priors
// and restarts, and a posterior with cached Cholesky factor that can be
// extended incrementally by pending points (fantasies for the variance) and
// conditioned on observed slopes (derivative_kernel.h).
#ifndef CAIRN_TUNER_GP_GAUSSIAN_PROCESS_H_
#define CAIRN_TUNER_GP_GAUSSIAN_PROCESS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cairn::gp {

// Kernel hyperparameters, all in log space (the space they are fitted in).
struct GpHyperparameters {
  Eigen::VectorXd log_length_scales;  // One per dimension (ARD).
  double log_signal_variance = 0.0;
  double log_noise_variance = -6.9;
  // Not a kernel parameter (Pack and the GP ignore it): whether the outputs
  // these were fitted to went through the output power warp
  // (output_warping.h). GpBandit chooses it with each checkpoint fit.
  bool output_power_warp = false;

  int num_dims() const { return static_cast<int>(log_length_scales.size()); }
  // [log_length_scales..., log_signal_variance, log_noise_variance].
  Eigen::VectorXd Pack() const;
  static GpHyperparameters Unpack(const Eigen::VectorXd& packed);
};

// Which input dimensions are categorical (overlap distance: 0 when equal, 1
// otherwise); the others use (a - b)^2. Both are scaled by 1/length_scale^2.
using CategoricalMask = std::vector<bool>;

// Cross-covariance K(a_i, b_j) of the Matern-5/2 ARD kernel:
// s2 * (1 + sqrt(5) r + 5/3 r^2) * exp(-sqrt(5) r), r^2 = sum_d dist_d / l_d^2.
// a: m x D, b: n x D, rows are points. Returns m x n.
Eigen::MatrixXd Matern52(const CategoricalMask& categorical,
                         const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                         const GpHyperparameters& h);

// Cholesky factor (lower) of `k`, retrying with diagonal jitter growing
// tenfold from 1e-10 * mean(diag) up to 1e-2 * mean(diag). Never throws or
// aborts: returns FailedPrecondition when the matrix is not finite or still
// not positive definite. `jitter` (optional) receives the jitter added.
absl::StatusOr<Eigen::MatrixXd> CholeskyWithJitter(const Eigen::MatrixXd& k,
                                                   double* jitter = nullptr);

// Log marginal likelihood of y (zero prior mean) under the kernel plus noise,
// and (when grad != nullptr) its gradient with respect to h.Pack().
// Returns FailedPrecondition if the covariance cannot be factorized.
absl::StatusOr<double> LogMarginalLikelihood(const CategoricalMask& categorical,
                                             const Eigen::MatrixXd& x,
                                             const Eigen::VectorXd& y,
                                             const GpHyperparameters& h,
                                             Eigen::VectorXd* grad = nullptr);

// Priors and box bounds of the hyperparameter fit. Defaults are meant for
// inputs in the unit cube and standardized outputs.
struct GpPriorOptions {
  // Length scales: log-normal prior; its log-mean is
  // log(length_scale_prior_base) + 0.5 * log(D), so the prior lengthens with
  // dimension (as in Hvarfner et al. 2024), clipped to the bounds.
  double length_scale_prior_base = 0.5;
  double length_scale_prior_sigma = 1.2;
  double min_length_scale = 1e-2;
  double max_length_scale = 1e2;
  // Signal variance: log-normal around 1, bounded.
  double signal_variance_prior_sigma = 1.0;
  double min_signal_variance = 1e-3;
  double max_signal_variance = 10.0;
  // Noise variance: log-normal around 1e-3, bounded.
  double noise_variance_prior_mean = 1e-3;
  double noise_variance_prior_sigma = 2.0;
  double min_noise_variance = 1e-6;
  double max_noise_variance = 1.0;
};

// Log prior density (up to a constant) and its gradient w.r.t. Pack().
double LogPrior(const GpPriorOptions& prior, const GpHyperparameters& h,
                Eigen::VectorXd* grad = nullptr);

// The prior's mode, used as the first start of a fit.
GpHyperparameters PriorMode(const GpPriorOptions& prior, int num_dims);

struct GpFitOptions {
  GpPriorOptions prior;
  // Random starts drawn from the prior, in addition to the prior mode and the
  // warm start. 0 with a warm start means "refine the warm start only".
  int num_random_restarts = 3;
  // L-BFGS-B iterations per start.
  int max_iterations = 60;
  // Whether to also start from the prior mode when a warm start is given.
  bool start_from_prior_mode = true;
};

// Maximizes log marginal likelihood + log prior over the box bounds with
// L-BFGS-B (LBFGSpp) from several starts; deterministic for `seed`. The warm
// start, when given, is one of the starts. Returns the best hyperparameters
// found, or FailedPrecondition when no start could be evaluated at all.
// REQUIRES: x.rows() == y.size() >= 1.
absl::StatusOr<GpHyperparameters> FitHyperparameters(
    const CategoricalMask& categorical, const Eigen::MatrixXd& x,
    const Eigen::VectorXd& y, const GpFitOptions& options, uint64_t seed,
    const GpHyperparameters* warm_start = nullptr);

// One slope: the partial derivative of the function along continuous
// dimension `dim` at point `x` (covariances: derivative_kernel.h).
struct SlopePoint {
  Eigen::VectorXd x;
  int dim = 0;
};

// Observed slopes: the derivative along points[j].dim at points[j].x is
// values[j], with Gaussian noise of variance noise_variances[j].
struct SlopeObservations {
  std::vector<SlopePoint> points;
  std::vector<double> values;
  std::vector<double> noise_variances;
};

// A GP posterior with fixed hyperparameters. Copyable; thread-compatible
// (const methods may be called concurrently).
class GaussianProcess {
 public:
  // Factorizes K(x, x) + noise I. Returns FailedPrecondition when the matrix
  // cannot be factorized even with jitter, InvalidArgument on shape mismatch.
  static absl::StatusOr<GaussianProcess> Create(CategoricalMask categorical,
                                                Eigen::MatrixXd x,
                                                Eigen::VectorXd y,
                                                GpHyperparameters h);

  // Conditions the posterior *variance* (not the mean) on more input points
  // without outputs: pending trials or earlier members of a batch. Extends
  // the cached Cholesky factor incrementally (O((n + p)^2 q)).
  absl::Status AddPendingPoints(const Eigen::MatrixXd& x_pending);

  // This posterior also conditioned on `slopes` (mean and variance), with
  // the same observed and pending points; slopes it already holds are kept.
  // Refactorizes (O((n + v + p)^3)). FailedPrecondition when the joint
  // covariance cannot be factorized, InvalidArgument on a malformed slope
  // (sizes, a dimension out of range or categorical, a noise <= 0).
  absl::StatusOr<GaussianProcess> WithSlopes(
      const SlopeObservations& slopes) const;

  // Posterior mean (given the observed data) and latent variance (given the
  // observed and pending points) at the rows of xq. Either output may be null.
  void Predict(const Eigen::MatrixXd& xq, Eigen::VectorXd* mean,
               Eigen::VectorXd* variance) const;

  const GpHyperparameters& hyperparameters() const { return h_; }
  int num_observed() const { return num_observed_; }
  int num_points() const { return static_cast<int>(x_.rows()); }
  int num_slopes() const;

 private:
  GaussianProcess();

  // Covariances of every row (observed, slopes, pending, in that order)
  // with the function at the rows of xq: (n + v + p) x m.
  Eigen::MatrixXd CrossCovariance(const Eigen::MatrixXd& xq) const;

  CategoricalMask categorical_;
  GpHyperparameters h_;
  Eigen::MatrixXd x_;  // Observed rows, then pending rows.
  Eigen::VectorXd y_;  // Outputs of the observed rows.
  int num_observed_ = 0;
  // Shared (immutable once built), so copies of a posterior stay cheap.
  std::shared_ptr<const SlopeObservations> slopes_;
  // Lower Cholesky factor over observed, slope and pending rows.
  Eigen::MatrixXd chol_;
  Eigen::VectorXd alpha_;  // K^-1 (y, slope values) over observed and slopes.
};

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_GAUSSIAN_PROCESS_H_
