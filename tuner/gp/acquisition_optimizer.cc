// Firefly-style evolutionary acquisition search over a mixed space.
#include "tuner/gp/acquisition_optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace cairn::gp {
namespace {

// Moves continuous dim d of x by a Gaussian step; grid dims may also jump.
void MutateDim(const MixedSpace& space, int d, double sigma, double jump,
               Rng& rng, Eigen::VectorXd& x) {
  const Dimension& dim = space.dim(d);
  if (dim.kind == Dimension::Kind::kCategorical) {
    if (rng.Uniform() < jump) x[d] = rng.UniformInt(dim.num_categories);
    return;
  }
  if (!dim.grid.empty() && rng.Uniform() < jump) {
    x[d] = dim.grid[rng.UniformInt(static_cast<int>(dim.grid.size()))];
    return;
  }
  double step = sigma * rng.Normal();
  if (!dim.grid.empty() && dim.grid.size() > 1) {
    // Make sure a small sigma can still reach a neighbouring grid value.
    const double gap = 1.0 / static_cast<double>(dim.grid.size() - 1);
    if (std::abs(step) < 0.5 * gap && rng.Uniform() < 0.3) {
      step = (step >= 0 ? 1.0 : -1.0) * gap;
    }
  }
  double v = x[d] + step;
  // Reflect at the bounds rather than piling up on them.
  if (v < 0.0) v = -v;
  if (v > 1.0) v = 2.0 - v;
  x[d] = std::clamp(v, 0.0, 1.0);
}

// Where random initial candidates are drawn: an L-infinity ball around one
// of `centers` (in the continuous non-grid dimensions) when `active`.
struct TrustRegion {
  const Eigen::MatrixXd& centers;
  double radius;
  bool active;
};

// Seed row i % seeds.rows(), every dimension mutated by one random sigma.
Eigen::VectorXd PerturbedSeed(const MixedSpace& space,
                              const Eigen::MatrixXd& seeds, int i,
                              double jump_probability, Rng& rng) {
  Eigen::VectorXd x = seeds.row(i % seeds.rows()).transpose();
  const double sigma = 0.02 + 0.13 * rng.Uniform();
  for (int d = 0; d < space.size(); ++d) {
    MutateDim(space, d, sigma, jump_probability, rng, x);
  }
  return x;
}

// A random point, inside the trust region when one applies.
Eigen::VectorXd RandomCandidate(const MixedSpace& space,
                                const TrustRegion& region, Rng& rng) {
  Eigen::VectorXd x = space.Sample(rng);
  if (!region.active) return x;
  const int c = rng.UniformInt(static_cast<int>(region.centers.rows()));
  for (int d = 0; d < space.size(); ++d) {
    if (space.IsCategorical(d) || !space.dim(d).grid.empty()) continue;
    const double lo = std::max(0.0, region.centers(c, d) - region.radius);
    const double hi = std::min(1.0, region.centers(c, d) + region.radius);
    x[d] = lo + (hi - lo) * rng.Uniform();
  }
  return x;
}

// Initial pool: perturbed seeds (a third at most) and random points (in the
// trust region when one applies), canonicalized.
Eigen::MatrixXd InitialPool(const MixedSpace& space,
                            const Eigen::MatrixXd& seeds,
                            const TrustRegion& region, int num_init,
                            double jump_probability, Rng& rng) {
  Eigen::MatrixXd pool(num_init, space.size());
  const int num_seeded =
      seeds.rows() > 0 ? std::min<int>(num_init / 3, 8 * seeds.rows()) : 0;
  for (int i = 0; i < num_init; ++i) {
    Eigen::VectorXd x =
        i < num_seeded ? PerturbedSeed(space, seeds, i, jump_probability, rng)
                       : RandomCandidate(space, region, rng);
    space.Canonicalize(x);
    pool.row(i) = x.transpose();
  }
  return pool;
}

// The evolving members and their scores.
struct Population {
  Eigen::MatrixXd x;
  Eigen::VectorXd scores;
};

// The best `size` pool members (cycling when the pool is smaller).
Population BestMembers(const Eigen::MatrixXd& pool,
                       const Eigen::VectorXd& pool_scores, int size) {
  const int num_pool = static_cast<int>(pool.rows());
  std::vector<int> order(num_pool);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return pool_scores[a] > pool_scores[b];
  });
  Population population{Eigen::MatrixXd(size, pool.cols()),
                        Eigen::VectorXd(size)};
  for (int i = 0; i < size; ++i) {
    population.x.row(i) = pool.row(order[i % num_pool]);
    population.scores[i] = pool_scores[order[i % num_pool]];
  }
  return population;
}

// Mutation scale of generation g of `generations`: decays geometrically
// from initial_sigma to final_sigma.
double GenerationSigma(const AcquisitionOptimizerOptions& options, int g,
                       int generations) {
  const double t = generations > 1 ? g / double(generations - 1) : 1.0;
  return options.initial_sigma *
         std::pow(options.final_sigma / options.initial_sigma, t);
}

// Moves x (a member at rank `pos`) toward a random brighter member (rank
// list `rank`): a random share of each continuous gap, categories copied
// with probability 1/2.
void MoveTowardBrighter(const MixedSpace& space, const Eigen::MatrixXd& popx,
                        const std::vector<int>& rank, int pos, Rng& rng,
                        Eigen::VectorXd& x) {
  const int j = rank[rng.UniformInt(pos)];  // A brighter member.
  const double beta = 0.3 + 0.7 * rng.Uniform();
  for (int d = 0; d < space.size(); ++d) {
    if (space.IsCategorical(d)) {
      if (rng.Uniform() < 0.5) x[d] = popx(j, d);
    } else {
      x[d] += beta * (popx(j, d) - x[d]);
    }
  }
}

// Mutates a random subset of dimensions (at least one).
void MutateSome(const MixedSpace& space, double sigma, double jump_probability,
                Rng& rng, Eigen::VectorXd& x) {
  const int dims = space.size();
  const int forced = rng.UniformInt(dims);
  const double p = std::min(1.0, 2.0 / dims);
  for (int d = 0; d < dims; ++d) {
    if (d == forced || rng.Uniform() < p) {
      MutateDim(space, d, sigma, jump_probability, rng, x);
    }
  }
}

// Each member's child: attracted to a brighter member (all but the
// brightest), then mutated and canonicalized.
Eigen::MatrixXd Children(const MixedSpace& space, const Population& population,
                         double sigma, double jump_probability, Rng& rng) {
  const int pop = static_cast<int>(population.x.rows());
  std::vector<int> rank(pop);
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(), [&](int a, int b) {
    return population.scores[a] > population.scores[b];
  });
  std::vector<int> position(pop);
  for (int r = 0; r < pop; ++r) position[rank[r]] = r;
  Eigen::MatrixXd children(pop, space.size());
  for (int i = 0; i < pop; ++i) {
    Eigen::VectorXd x = population.x.row(i).transpose();
    if (position[i] > 0) {
      MoveTowardBrighter(space, population.x, rank, position[i], rng, x);
    }
    MutateSome(space, sigma, jump_probability, rng, x);
    space.Canonicalize(x);
    children.row(i) = x.transpose();
  }
  return children;
}

// Scores the children and keeps each one that beats its parent.
void ReplaceByBetterChildren(const Eigen::MatrixXd& children,
                             const BatchScoreFn& score,
                             Population& population) {
  Eigen::VectorXd child_scores;
  score(children, &child_scores);
  for (Eigen::Index i = 0; i < children.rows(); ++i) {
    if (child_scores[i] > population.scores[i]) {
      population.x.row(i) = children.row(i);
      population.scores[i] = child_scores[i];
    }
  }
}

// Fills result's point and score with the best member, unless every score
// is -infinity or NaN.
void TakeBest(const Population& population, AcquisitionResult& result) {
  Eigen::Index best;
  const double best_score = population.scores.maxCoeff(&best);
  if (best_score == -std::numeric_limits<double>::infinity() ||
      std::isnan(best_score)) {
    return;
  }
  result.x = population.x.row(best).transpose();
  result.score = best_score;
}

}  // namespace

double TrustRegionRadius(int num_observed, int num_dims) {
  const double r = 0.2 + 0.3 * num_observed / (5.0 * (num_dims + 1));
  return r > 0.5 ? std::numeric_limits<double>::infinity() : r;
}

AcquisitionResult MaximizeAcquisition(
    const MixedSpace& space, const BatchScoreFn& score,
    const Eigen::MatrixXd& seeds, const Eigen::MatrixXd& trust_centers,
    double trust_radius, const AcquisitionOptimizerOptions& options, Rng& rng) {
  const int budget = std::max(options.max_evaluations, 2 * options.population);
  const int pop = std::max(2, options.population);
  const int num_init =
      std::max(pop, static_cast<int>(options.initial_fraction * budget));
  const TrustRegion region{
      trust_centers, trust_radius,
      trust_centers.rows() > 0 && std::isfinite(trust_radius)};
  AcquisitionResult result;

  const Eigen::MatrixXd pool = InitialPool(space, seeds, region, num_init,
                                           options.jump_probability, rng);
  Eigen::VectorXd pool_scores;
  score(pool, &pool_scores);
  result.evaluations += num_init;

  Population population = BestMembers(pool, pool_scores, pop);
  const int generations = std::max(1, (budget - num_init) / pop);
  for (int g = 0; g < generations; ++g) {
    const double sigma = GenerationSigma(options, g, generations);
    const Eigen::MatrixXd children =
        Children(space, population, sigma, options.jump_probability, rng);
    ReplaceByBetterChildren(children, score, population);
    result.evaluations += pop;
  }
  TakeBest(population, result);
  return result;
}

}  // namespace cairn::gp
