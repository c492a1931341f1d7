// Matern-5/2 GP: kernel, Cholesky with jitter, marginal likelihood and fit.
#include "tuner/gp/gaussian_process.h"

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <utility>

#include "Eigen/Cholesky"
#include "absl/strings/str_cat.h"
#include "tuner/gp/derivative_kernel.h"
#include "tuner/gp/mixed_space.h"

namespace cairn::gp {
namespace {

constexpr double kSqrt5 = 2.23606797749978969640;

// Squared scaled distances r^2 between rows of a and rows of b, written to
// r2 (m x n).
void ScaledSquaredDistancesInto(const CategoricalMask& categorical,
                                const Eigen::Ref<const Eigen::MatrixXd>& a,
                                const Eigen::MatrixXd& b,
                                const Eigen::VectorXd& inv_l2,
                                Eigen::Ref<Eigen::MatrixXd> r2) {
  const int dims = static_cast<int>(a.cols());
  const Eigen::Index m = a.rows(), n = b.rows();
  std::vector<int> cont, cat;
  for (int d = 0; d < dims; ++d) {
    (categorical[d] ? cat : cont).push_back(d);
  }
  r2.setZero();
  if (!cont.empty()) {
    Eigen::MatrixXd as(m, cont.size()), bs(n, cont.size());
    for (size_t c = 0; c < cont.size(); ++c) {
      const double s = std::sqrt(inv_l2[cont[c]]);
      as.col(c) = a.col(cont[c]) * s;
      bs.col(c) = b.col(cont[c]) * s;
    }
    r2.noalias() = -2.0 * as * bs.transpose();
    r2.colwise() += as.rowwise().squaredNorm();
    r2.rowwise() += bs.rowwise().squaredNorm().transpose();
  }
  for (int d : cat) {
    const double w = inv_l2[d];
    for (Eigen::Index j = 0; j < n; ++j) {
      const double bj = b(j, d);
      for (Eigen::Index i = 0; i < m; ++i) {
        if (a(i, d) != bj) r2(i, j) += w;
      }
    }
  }
  r2 = r2.cwiseMax(0.0);  // Coefficient-wise, in place.
}

Eigen::MatrixXd ScaledSquaredDistances(const CategoricalMask& categorical,
                                       const Eigen::MatrixXd& a,
                                       const Eigen::MatrixXd& b,
                                       const Eigen::VectorXd& inv_l2) {
  Eigen::MatrixXd r2(a.rows(), b.rows());
  ScaledSquaredDistancesInto(categorical, a, b, inv_l2, r2);
  return r2;
}

Eigen::VectorXd InverseSquaredLengthScales(const GpHyperparameters& h) {
  return (-2.0 * h.log_length_scales.array()).exp().matrix();
}

// Matern52(categorical, a, b, h) written to k (a.rows() x b.rows()), in
// place: the acquisition search computes thousands of these per
// suggestion, and every temporary of this size is an allocation the
// allocator may hand back to the kernel and fault in again.
void Matern52Into(const CategoricalMask& categorical,
                  const Eigen::Ref<const Eigen::MatrixXd>& a,
                  const Eigen::MatrixXd& b, const GpHyperparameters& h,
                  Eigen::Ref<Eigen::MatrixXd> k) {
  ScaledSquaredDistancesInto(categorical, a, b, InverseSquaredLengthScales(h),
                             k);
  const double s2 = std::exp(h.log_signal_variance);
  // Coefficient-wise, so safe in place.
  k.array() = s2 * (1.0 + kSqrt5 * k.array().sqrt() + (5.0 / 3.0) * k.array()) *
              (-kSqrt5 * k.array().sqrt()).exp();
}

// Bounds of Pack() under the prior options.
void Bounds(const GpPriorOptions& p, int dims, Eigen::VectorXd* lb,
            Eigen::VectorXd* ub) {
  lb->resize(dims + 2);
  ub->resize(dims + 2);
  lb->head(dims).setConstant(std::log(p.min_length_scale));
  ub->head(dims).setConstant(std::log(p.max_length_scale));
  (*lb)[dims] = std::log(p.min_signal_variance);
  (*ub)[dims] = std::log(p.max_signal_variance);
  (*lb)[dims + 1] = std::log(p.min_noise_variance);
  (*ub)[dims + 1] = std::log(p.max_noise_variance);
}

double LengthScalePriorMean(const GpPriorOptions& p, int dims) {
  const double mu =
      std::log(p.length_scale_prior_base) + 0.5 * std::log(std::max(1, dims));
  return std::clamp(mu, std::log(p.min_length_scale),
                    std::log(p.max_length_scale));
}

}  // namespace

Eigen::VectorXd GpHyperparameters::Pack() const {
  const int d = num_dims();
  Eigen::VectorXd v(d + 2);
  v.head(d) = log_length_scales;
  v[d] = log_signal_variance;
  v[d + 1] = log_noise_variance;
  return v;
}

GpHyperparameters GpHyperparameters::Unpack(const Eigen::VectorXd& packed) {
  const int d = static_cast<int>(packed.size()) - 2;
  GpHyperparameters h;
  h.log_length_scales = packed.head(d);
  h.log_signal_variance = packed[d];
  h.log_noise_variance = packed[d + 1];
  return h;
}

Eigen::MatrixXd Matern52(const CategoricalMask& categorical,
                         const Eigen::MatrixXd& a, const Eigen::MatrixXd& b,
                         const GpHyperparameters& h) {
  Eigen::MatrixXd k(a.rows(), b.rows());
  Matern52Into(categorical, a, b, h, k);
  return k;
}

absl::StatusOr<Eigen::MatrixXd> CholeskyWithJitter(const Eigen::MatrixXd& k,
                                                   double* jitter) {
  if (k.rows() != k.cols()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cholesky: matrix is ", k.rows(), "x", k.cols(), ", not square"));
  }
  if (!k.allFinite()) {
    return absl::FailedPreconditionError(
        "Cholesky: matrix has non-finite entries");
  }
  const Eigen::Index n = k.rows();
  if (n == 0) return Eigen::MatrixXd(0, 0);
  const double scale = std::max(k.diagonal().cwiseAbs().mean(), 1e-300);
  double added = 0.0;
  Eigen::MatrixXd a = k;
  for (double rel = 0.0; rel <= 1e-2 * 1.0001;
       rel = (rel == 0.0 ? 1e-10 : rel * 10.0)) {
    if (rel > 0.0) {
      a.diagonal() = k.diagonal().array() + rel * scale;
      added = rel * scale;
    }
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(a);
    if (llt.info() == Eigen::Success && a.diagonal().minCoeff() > 0.0) {
      if (jitter != nullptr) *jitter = added;
      a.triangularView<Eigen::StrictlyUpper>().setZero();
      return a;
    }
    a = k;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "Cholesky: ", n, "x", n,
      " matrix is not positive definite even with jitter 1e-2 * mean(diag)"));
}

absl::StatusOr<double> LogMarginalLikelihood(const CategoricalMask& categorical,
                                             const Eigen::MatrixXd& x,
                                             const Eigen::VectorXd& y,
                                             const GpHyperparameters& h,
                                             Eigen::VectorXd* grad) {
  const int dims = static_cast<int>(x.cols());
  const Eigen::Index n = x.rows();
  if (y.size() != n || h.num_dims() != dims ||
      static_cast<int>(categorical.size()) != dims) {
    return absl::InvalidArgumentError(
        absl::StrCat("LogMarginalLikelihood: shapes disagree: x ", n, "x", dims,
                     ", y ", y.size(), ", length scales ", h.num_dims(),
                     ", mask ", categorical.size()));
  }
  const Eigen::VectorXd inv_l2 = InverseSquaredLengthScales(h);
  const Eigen::MatrixXd r2 = ScaledSquaredDistances(categorical, x, x, inv_l2);
  const double s2 = std::exp(h.log_signal_variance);
  const double noise = std::exp(h.log_noise_variance);
  const Eigen::ArrayXXd r = r2.array().sqrt();
  const Eigen::ArrayXXd e = (-kSqrt5 * r).exp();
  Eigen::MatrixXd k =
      (s2 * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2.array()) * e).matrix();
  const Eigen::MatrixXd k_signal = k;
  k.diagonal().array() += noise;
  absl::StatusOr<Eigen::MatrixXd> chol = CholeskyWithJitter(k);
  if (!chol.ok()) return chol.status();
  const Eigen::MatrixXd& l = *chol;
  Eigen::VectorXd alpha = l.triangularView<Eigen::Lower>().solve(y);
  const double quad = alpha.squaredNorm();
  l.transpose().triangularView<Eigen::Upper>().solveInPlace(alpha);
  const double log_det = 2.0 * chol->diagonal().array().log().sum();
  const double lml =
      -0.5 * quad - 0.5 * log_det - 0.5 * n * std::log(2.0 * M_PI);
  if (grad != nullptr) {
    // dLML/dtheta = 0.5 tr((alpha alpha^T - K^-1) dK/dtheta).
    Eigen::MatrixXd w = Eigen::MatrixXd::Identity(n, n);
    l.triangularView<Eigen::Lower>().solveInPlace(w);
    l.transpose().triangularView<Eigen::Upper>().solveInPlace(w);  // K^-1.
    w = alpha * alpha.transpose() - w;
    grad->resize(dims + 2);
    (*grad)[dims] = 0.5 * (w.array() * k_signal.array()).sum();
    (*grad)[dims + 1] = 0.5 * noise * w.trace();
    // dk/dlog(l_d) = s2 * 5/3 (1 + sqrt5 r) exp(-sqrt5 r) * dist_d / l_d^2.
    const Eigen::MatrixXd m =
        (w.array() * (s2 * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e)).matrix();
    const Eigen::VectorXd row_sum = m.rowwise().sum();
    for (int d = 0; d < dims; ++d) {
      double s;
      if (categorical[d]) {
        s = 0.0;
        for (Eigen::Index j = 0; j < n; ++j) {
          const double xj = x(j, d);
          for (Eigen::Index i = 0; i < n; ++i) {
            if (x(i, d) != xj) s += m(i, j);
          }
        }
      } else {
        const Eigen::VectorXd xd = x.col(d);
        s = 2.0 * xd.cwiseProduct(xd).dot(row_sum) - 2.0 * xd.dot(m * xd);
      }
      (*grad)[d] = 0.5 * s * inv_l2[d];
    }
  }
  return lml;
}

double LogPrior(const GpPriorOptions& prior, const GpHyperparameters& h,
                Eigen::VectorXd* grad) {
  const int dims = h.num_dims();
  const double mu_l = LengthScalePriorMean(prior, dims);
  const double sl = prior.length_scale_prior_sigma;
  const double ss = prior.signal_variance_prior_sigma;
  const double mu_n = std::log(prior.noise_variance_prior_mean);
  const double sn = prior.noise_variance_prior_sigma;
  double lp = 0.0;
  if (grad != nullptr) grad->resize(dims + 2);
  for (int d = 0; d < dims; ++d) {
    const double z = h.log_length_scales[d] - mu_l;
    lp -= 0.5 * z * z / (sl * sl);
    if (grad != nullptr) (*grad)[d] = -z / (sl * sl);
  }
  lp -= 0.5 * h.log_signal_variance * h.log_signal_variance / (ss * ss);
  const double zn = h.log_noise_variance - mu_n;
  lp -= 0.5 * zn * zn / (sn * sn);
  if (grad != nullptr) {
    (*grad)[dims] = -h.log_signal_variance / (ss * ss);
    (*grad)[dims + 1] = -zn / (sn * sn);
  }
  return lp;
}

GpHyperparameters PriorMode(const GpPriorOptions& prior, int num_dims) {
  GpHyperparameters h;
  h.log_length_scales = Eigen::VectorXd::Constant(
      num_dims, LengthScalePriorMean(prior, num_dims));
  h.log_signal_variance = 0.0;
  h.log_noise_variance = std::clamp(std::log(prior.noise_variance_prior_mean),
                                    std::log(prior.min_noise_variance),
                                    std::log(prior.max_noise_variance));
  return h;
}

namespace {

// The points the optimizer starts from: the warm start (when its dimension
// fits), the prior mode (without a warm start or when asked), then
// options.num_random_restarts draws from the prior, seeded by `seed` and the
// number of points.
std::vector<Eigen::VectorXd> StartingPoints(
    const GpFitOptions& options, int dims, Eigen::Index rows, uint64_t seed,
    const GpHyperparameters* warm_start) {
  std::vector<Eigen::VectorXd> starts;
  if (warm_start != nullptr && warm_start->num_dims() == dims) {
    starts.push_back(warm_start->Pack());
  }
  if (warm_start == nullptr || options.start_from_prior_mode) {
    starts.push_back(PriorMode(options.prior, dims).Pack());
  }
  Rng rng(MixSeed(seed, 0xF17, static_cast<uint64_t>(rows)));
  const double mu_l = LengthScalePriorMean(options.prior, dims);
  for (int i = 0; i < options.num_random_restarts; ++i) {
    GpHyperparameters h;
    h.log_length_scales.resize(dims);
    for (int d = 0; d < dims; ++d) {
      h.log_length_scales[d] =
          mu_l + options.prior.length_scale_prior_sigma * rng.Normal();
    }
    h.log_signal_variance =
        options.prior.signal_variance_prior_sigma * rng.Normal();
    h.log_noise_variance =
        std::log(options.prior.noise_variance_prior_mean) +
        options.prior.noise_variance_prior_sigma * rng.Normal();
    starts.push_back(h.Pack());
  }
  return starts;
}

// L-BFGS-B settings of the hyperparameter fit.
LBFGSpp::LBFGSBParam<double> SolverParam(const GpFitOptions& options) {
  LBFGSpp::LBFGSBParam<double> param;
  param.m = 8;
  param.max_iterations = std::max(1, options.max_iterations);
  param.epsilon = 1e-5;
  param.epsilon_rel = 1e-6;
  param.max_linesearch = 30;
  return param;
}

}  // namespace

absl::StatusOr<GpHyperparameters> FitHyperparameters(
    const CategoricalMask& categorical, const Eigen::MatrixXd& x,
    const Eigen::VectorXd& y, const GpFitOptions& options, uint64_t seed,
    const GpHyperparameters* warm_start) {
  const int dims = static_cast<int>(x.cols());
  if (x.rows() < 1 || x.rows() != y.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FitHyperparameters: need matching x rows and y size >= 1, got ",
        x.rows(), " and ", y.size()));
  }
  Eigen::VectorXd lb, ub;
  Bounds(options.prior, dims, &lb, &ub);

  // Negative log posterior; tracks the best point evaluated so that a line
  // search failure still yields a usable answer.
  double best_f = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_theta;
  auto objective = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& g) {
    const GpHyperparameters h = GpHyperparameters::Unpack(theta);
    Eigen::VectorXd g_lml, g_prior;
    absl::StatusOr<double> lml =
        LogMarginalLikelihood(categorical, x, y, h, &g_lml);
    if (!lml.ok() || !std::isfinite(*lml) || !g_lml.allFinite()) {
      g.setZero();
      return 1e30;
    }
    const double lp = LogPrior(options.prior, h, &g_prior);
    const double f = -(*lml + lp);
    g = -(g_lml + g_prior);
    if (f < best_f) {
      best_f = f;
      best_theta = theta;
    }
    return f;
  };

  const std::vector<Eigen::VectorXd> starts =
      StartingPoints(options, dims, x.rows(), seed, warm_start);
  // The solver keeps a reference to its parameters.
  const LBFGSpp::LBFGSBParam<double> param = SolverParam(options);
  LBFGSpp::LBFGSBSolver<double> solver(param);
  for (Eigen::VectorXd theta : starts) {
    theta = theta.cwiseMax(lb).cwiseMin(ub);
    double fx = 0.0;
    try {
      solver.minimize(objective, theta, fx, lb, ub);
    } catch (const std::exception&) {
      // Line-search failures are expected near bounds and flat regions; the
      // best point evaluated so far is kept.
    }
  }
  if (best_theta.size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("FitHyperparameters: the covariance of ", x.rows(),
                     " points could not be factorized for any start"));
  }
  return GpHyperparameters::Unpack(best_theta);
}

GaussianProcess::GaussianProcess()
    : slopes_(std::make_shared<const SlopeObservations>()) {}

int GaussianProcess::num_slopes() const {
  return static_cast<int>(slopes_->points.size());
}

absl::StatusOr<GaussianProcess> GaussianProcess::Create(
    CategoricalMask categorical, Eigen::MatrixXd x, Eigen::VectorXd y,
    GpHyperparameters h) {
  if (x.rows() != y.size() || x.cols() != h.num_dims() ||
      static_cast<Eigen::Index>(categorical.size()) != x.cols()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GaussianProcess: shapes disagree: x ", x.rows(), "x",
                     x.cols(), ", y ", y.size(), ", length scales ",
                     h.num_dims(), ", mask ", categorical.size()));
  }
  GaussianProcess gp;
  gp.categorical_ = std::move(categorical);
  gp.h_ = std::move(h);
  gp.x_ = std::move(x);
  gp.y_ = std::move(y);
  gp.num_observed_ = static_cast<int>(gp.x_.rows());
  Eigen::MatrixXd k = Matern52(gp.categorical_, gp.x_, gp.x_, gp.h_);
  k.diagonal().array() += std::exp(gp.h_.log_noise_variance);
  absl::StatusOr<Eigen::MatrixXd> chol = CholeskyWithJitter(k);
  if (!chol.ok()) return chol.status();
  gp.chol_ = *std::move(chol);
  gp.alpha_ = gp.chol_.triangularView<Eigen::Lower>().solve(gp.y_);
  gp.chol_.transpose().triangularView<Eigen::Upper>().solveInPlace(gp.alpha_);
  return gp;
}

namespace {

absl::Status ValidateSlopes(const SlopeObservations& slopes,
                            const CategoricalMask& categorical) {
  const size_t v = slopes.points.size();
  if (slopes.values.size() != v || slopes.noise_variances.size() != v) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WithSlopes: ", v, " points but ", slopes.values.size(), " values and ",
        slopes.noise_variances.size(), " noise variances"));
  }
  const int dims = static_cast<int>(categorical.size());
  for (size_t j = 0; j < v; ++j) {
    const SlopePoint& p = slopes.points[j];
    if (p.x.size() != dims || p.dim < 0 || p.dim >= dims ||
        categorical[p.dim] || !(slopes.noise_variances[j] > 0.0) ||
        !std::isfinite(slopes.values[j])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WithSlopes: slope ", j, " (dimension ", p.dim, " of a ", p.x.size(),
          "-D point, noise ", slopes.noise_variances[j],
          ") is not a finite slope along a continuous dimension"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GaussianProcess> GaussianProcess::WithSlopes(
    const SlopeObservations& more) const {
  if (absl::Status valid = ValidateSlopes(more, categorical_); !valid.ok()) {
    return valid;
  }
  auto all = std::make_shared<SlopeObservations>(*slopes_);
  all->points.insert(all->points.end(), more.points.begin(), more.points.end());
  all->values.insert(all->values.end(), more.values.begin(), more.values.end());
  all->noise_variances.insert(all->noise_variances.end(),
                              more.noise_variances.begin(),
                              more.noise_variances.end());
  const Eigen::Index n = num_observed_;
  const Eigen::Index v = static_cast<Eigen::Index>(all->points.size());
  // Joint covariance of (observed values, slopes).
  Eigen::MatrixXd k(n + v, n + v);
  const Eigen::MatrixXd xo = x_.topRows(n);
  k.topLeftCorner(n, n) = Matern52(categorical_, xo, xo, h_);
  k.topLeftCorner(n, n).diagonal().array() += std::exp(h_.log_noise_variance);
  const Eigen::MatrixXd sv =
      SlopeValueCovariance(categorical_, all->points, xo, h_);
  k.bottomLeftCorner(v, n) = sv;
  k.topRightCorner(n, v) = sv.transpose();
  k.bottomRightCorner(v, v) =
      SlopeSlopeCovariance(categorical_, all->points, h_);
  for (Eigen::Index j = 0; j < v; ++j) {
    k(n + j, n + j) += all->noise_variances[j];
  }
  absl::StatusOr<Eigen::MatrixXd> chol = CholeskyWithJitter(k);
  if (!chol.ok()) return chol.status();
  GaussianProcess gp;
  gp.categorical_ = categorical_;
  gp.h_ = h_;
  gp.x_ = xo;
  gp.y_ = y_;
  gp.num_observed_ = num_observed_;
  gp.chol_ = *std::move(chol);
  Eigen::VectorXd target(n + v);
  target.head(n) = y_;
  for (Eigen::Index j = 0; j < v; ++j) target[n + j] = all->values[j];
  gp.slopes_ = std::move(all);
  gp.alpha_ = gp.chol_.triangularView<Eigen::Lower>().solve(target);
  gp.chol_.transpose().triangularView<Eigen::Upper>().solveInPlace(gp.alpha_);
  if (x_.rows() > n) {
    absl::Status pending = gp.AddPendingPoints(x_.bottomRows(x_.rows() - n));
    if (!pending.ok()) return pending;
  }
  return gp;
}

Eigen::MatrixXd GaussianProcess::CrossCovariance(
    const Eigen::MatrixXd& xq) const {
  const Eigen::Index v = num_slopes();
  if (v == 0) return Matern52(categorical_, x_, xq, h_);
  const Eigen::Index n = num_observed_, p = x_.rows() - n;
  Eigen::MatrixXd k(n + v + p, xq.rows());
  Matern52Into(categorical_, x_.topRows(n), xq, h_, k.topRows(n));
  k.middleRows(n, v) =
      SlopeValueCovariance(categorical_, slopes_->points, xq, h_);
  if (p > 0) {
    Matern52Into(categorical_, x_.bottomRows(p), xq, h_, k.bottomRows(p));
  }
  return k;
}

absl::Status GaussianProcess::AddPendingPoints(
    const Eigen::MatrixXd& x_pending) {
  if (x_pending.rows() == 0) return absl::OkStatus();
  if (x_pending.cols() != x_.cols()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AddPendingPoints: points have ", x_pending.cols(),
                     " columns, expected ", x_.cols()));
  }
  const Eigen::Index rows = chol_.rows(), q = x_pending.rows();
  // [L 0; B^T C] with L B = K(rows, xp), C C^T = K(xp, xp) + noise - B^T B.
  Eigen::MatrixXd b = CrossCovariance(x_pending);
  chol_.triangularView<Eigen::Lower>().solveInPlace(b);
  Eigen::MatrixXd s = Matern52(categorical_, x_pending, x_pending, h_);
  s.diagonal().array() += std::exp(h_.log_noise_variance);
  s.noalias() -= b.transpose() * b;
  s = 0.5 * (s + s.transpose());
  absl::StatusOr<Eigen::MatrixXd> c = CholeskyWithJitter(s);
  if (!c.ok()) return c.status();
  Eigen::MatrixXd chol(rows + q, rows + q);
  chol.topLeftCorner(rows, rows) = chol_;
  chol.topRightCorner(rows, q).setZero();
  chol.bottomLeftCorner(q, rows) = b.transpose();
  chol.bottomRightCorner(q, q) = *c;
  chol_ = std::move(chol);
  Eigen::MatrixXd x(x_.rows() + q, x_.cols());
  x << x_, x_pending;
  x_ = std::move(x);
  return absl::OkStatus();
}

void GaussianProcess::Predict(const Eigen::MatrixXd& xq, Eigen::VectorXd* mean,
                              Eigen::VectorXd* variance) const {
  Eigen::MatrixXd kq = CrossCovariance(xq);  // Rows x m.
  if (mean != nullptr) {
    *mean = kq.topRows(alpha_.size()).transpose() * alpha_;
  }
  if (variance != nullptr) {
    chol_.triangularView<Eigen::Lower>().solveInPlace(kq);
    const double s2 = std::exp(h_.log_signal_variance);
    *variance = (s2 - kq.colwise().squaredNorm().array())
                    .max(1e-12 * s2)
                    .matrix()
                    .transpose();
  }
}

}  // namespace cairn::gp
