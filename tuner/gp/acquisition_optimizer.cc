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

}  // namespace

double TrustRegionRadius(int num_observed, int num_dims) {
  const double r = 0.2 + 0.3 * num_observed / (5.0 * (num_dims + 1));
  return r > 0.5 ? std::numeric_limits<double>::infinity() : r;
}

AcquisitionResult MaximizeAcquisition(
    const MixedSpace& space, const BatchScoreFn& score,
    const Eigen::MatrixXd& seeds, const Eigen::MatrixXd& trust_centers,
    double trust_radius, const AcquisitionOptimizerOptions& options, Rng& rng) {
  const int dims = space.size();
  const int budget = std::max(options.max_evaluations, 2 * options.population);
  const int pop = std::max(2, options.population);
  const int num_init =
      std::max(pop, static_cast<int>(options.initial_fraction * budget));
  const bool use_tr = trust_centers.rows() > 0 && std::isfinite(trust_radius);
  AcquisitionResult result;

  // Initial pool: perturbed seeds (a third at most) and random points (in the
  // trust region when one applies).
  Eigen::MatrixXd pool(num_init, dims);
  const int num_seeded =
      seeds.rows() > 0 ? std::min<int>(num_init / 3, 8 * seeds.rows()) : 0;
  for (int i = 0; i < num_init; ++i) {
    Eigen::VectorXd x;
    if (i < num_seeded) {
      x = seeds.row(i % seeds.rows()).transpose();
      const double sigma = 0.02 + 0.13 * rng.Uniform();
      for (int d = 0; d < dims; ++d) {
        MutateDim(space, d, sigma, options.jump_probability, rng, x);
      }
    } else {
      x = space.Sample(rng);
      if (use_tr) {
        const int c = rng.UniformInt(static_cast<int>(trust_centers.rows()));
        for (int d = 0; d < dims; ++d) {
          if (space.IsCategorical(d) || !space.dim(d).grid.empty()) continue;
          const double lo = std::max(0.0, trust_centers(c, d) - trust_radius);
          const double hi = std::min(1.0, trust_centers(c, d) + trust_radius);
          x[d] = lo + (hi - lo) * rng.Uniform();
        }
      }
    }
    space.Canonicalize(x);
    pool.row(i) = x.transpose();
  }
  Eigen::VectorXd pool_scores;
  score(pool, &pool_scores);
  result.evaluations += num_init;

  // Population: the best pool members.
  std::vector<int> order(num_init);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return pool_scores[a] > pool_scores[b];
  });
  Eigen::MatrixXd popx(pop, dims);
  Eigen::VectorXd pops(pop);
  for (int i = 0; i < pop; ++i) {
    popx.row(i) = pool.row(order[i % num_init]);
    pops[i] = pool_scores[order[i % num_init]];
  }

  const int generations = std::max(1, (budget - num_init) / pop);
  Eigen::MatrixXd children(pop, dims);
  Eigen::VectorXd child_scores;
  for (int g = 0; g < generations; ++g) {
    const double t = generations > 1 ? g / double(generations - 1) : 1.0;
    const double sigma =
        options.initial_sigma *
        std::pow(options.final_sigma / options.initial_sigma, t);
    // Rank members so each can be attracted to a brighter one.
    std::vector<int> rank(pop);
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(),
                     [&](int a, int b) { return pops[a] > pops[b]; });
    std::vector<int> position(pop);
    for (int r = 0; r < pop; ++r) position[rank[r]] = r;
    for (int i = 0; i < pop; ++i) {
      Eigen::VectorXd x = popx.row(i).transpose();
      const int pos = position[i];
      if (pos > 0) {
        const int j = rank[rng.UniformInt(pos)];  // A brighter member.
        const double beta = 0.3 + 0.7 * rng.Uniform();
        for (int d = 0; d < dims; ++d) {
          if (space.IsCategorical(d)) {
            if (rng.Uniform() < 0.5) x[d] = popx(j, d);
          } else {
            x[d] += beta * (popx(j, d) - x[d]);
          }
        }
      }
      // Mutate a random subset of dimensions (at least one).
      const int forced = rng.UniformInt(dims);
      const double p = std::min(1.0, 2.0 / dims);
      for (int d = 0; d < dims; ++d) {
        if (d == forced || rng.Uniform() < p) {
          MutateDim(space, d, sigma, options.jump_probability, rng, x);
        }
      }
      space.Canonicalize(x);
      children.row(i) = x.transpose();
    }
    score(children, &child_scores);
    result.evaluations += pop;
    for (int i = 0; i < pop; ++i) {
      if (child_scores[i] > pops[i]) {
        popx.row(i) = children.row(i);
        pops[i] = child_scores[i];
      }
    }
  }
  Eigen::Index best;
  const double best_score = pops.maxCoeff(&best);
  if (best_score == -std::numeric_limits<double>::infinity() ||
      std::isnan(best_score)) {
    return result;
  }
  result.x = popx.row(best).transpose();
  result.score = best_score;
  return result;
}

}  // namespace cairn::gp
