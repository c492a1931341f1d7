// Mixed space canonicalization, sampling and the Halton initial design.
#include "tuner/gp/mixed_space.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cairn::gp {
namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr int kPrimes[] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,
                           31,  37,  41,  43,  47,  53,  59,  61,  67,  71,
                           73,  79,  83,  89,  97,  101, 103, 107, 109, 113,
                           127, 131, 137, 139, 149, 151, 157, 163, 167, 173};

double RadicalInverse(int64_t index, int base) {
  double result = 0.0, f = 1.0 / base;
  while (index > 0) {
    result += f * static_cast<double>(index % base);
    index /= base;
    f /= base;
  }
  return result;
}

double SnapToGrid(const std::vector<double>& grid, double v) {
  auto it = std::lower_bound(grid.begin(), grid.end(), v);
  if (it == grid.end()) return grid.back();
  if (it == grid.begin()) return *it;
  const double hi = *it, lo = *(it - 1);
  return (v - lo <= hi - v) ? lo : hi;
}

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& s : s_) s = SplitMix(state);
}

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

double Rng::Normal() {
  double u1 = Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

int Rng::UniformInt(int n) {
  return static_cast<int>(Next() % static_cast<uint64_t>(n));
}

uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t state = a;
  uint64_t h = SplitMix(state);
  state = h ^ (b + 0x632BE59BD9B4E019ULL);
  h = SplitMix(state);
  state = h ^ (c + 0x8CB92BA72F3D8DD7ULL);
  return SplitMix(state);
}

absl::Status MixedSpace::Validate(const std::vector<Dimension>& dims) {
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dimension& dim = dims[d];
    if (dim.kind == Dimension::Kind::kCategorical) {
      if (dim.num_categories < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("dimension ", d, ": num_categories must be >= 1, got ",
                         dim.num_categories));
      }
    } else {
      for (size_t i = 0; i < dim.grid.size(); ++i) {
        if (!(dim.grid[i] >= 0.0 && dim.grid[i] <= 1.0) ||
            (i > 0 && !(dim.grid[i] > dim.grid[i - 1]))) {
          return absl::InvalidArgumentError(
              absl::StrCat("dimension ", d, ": grid value ", dim.grid[i],
                           " at ", i, " is outside [0, 1] or not increasing"));
        }
      }
    }
    if (dim.parent != -1) {
      if (dim.parent < 0 || dim.parent >= static_cast<int>(d)) {
        return absl::InvalidArgumentError(
            absl::StrCat("dimension ", d, ": parent ", dim.parent,
                         " must be a smaller dimension index"));
      }
      if (dim.parent_values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("dimension ", d, ": parent_values is empty"));
      }
    }
  }
  return absl::OkStatus();
}

MixedSpace::MixedSpace(std::vector<Dimension> dims) : dims_(std::move(dims)) {}

bool MixedSpace::IsActive(const Eigen::VectorXd& x, int d) const {
  const Dimension& dim = dims_[d];
  if (dim.parent < 0) return true;
  if (!IsActive(x, dim.parent)) return false;
  const double v = x[dim.parent];
  for (double p : dim.parent_values) {
    if (std::abs(p - v) <= 1e-9) return true;
  }
  return false;
}

void MixedSpace::Canonicalize(Eigen::Ref<Eigen::VectorXd> x) const {
  // Parents precede children, so one forward pass settles activity.
  std::vector<char> active(dims_.size(), 1);
  for (int d = 0; d < size(); ++d) {
    const Dimension& dim = dims_[d];
    if (dim.parent >= 0) {
      bool on = false;
      if (active[dim.parent]) {
        for (double p : dim.parent_values) {
          if (std::abs(p - x[dim.parent]) <= 1e-9) on = true;
        }
      }
      active[d] = on;
    }
    if (dim.kind == Dimension::Kind::kCategorical) {
      if (!active[d]) {
        x[d] = dim.num_categories;
        continue;
      }
      double c = std::round(x[d]);
      if (!std::isfinite(c)) c = 0;
      x[d] = std::clamp(c, 0.0, static_cast<double>(dim.num_categories - 1));
    } else {
      if (!active[d]) {
        x[d] = kInactiveContinuous;
        continue;
      }
      double v = std::isfinite(x[d]) ? std::clamp(x[d], 0.0, 1.0) : 0.5;
      if (!dim.grid.empty()) v = SnapToGrid(dim.grid, v);
      x[d] = v;
    }
  }
}

Eigen::VectorXd MixedSpace::Sample(Rng& rng) const {
  Eigen::VectorXd x(size());
  for (int d = 0; d < size(); ++d) {
    const Dimension& dim = dims_[d];
    if (dim.kind == Dimension::Kind::kCategorical) {
      x[d] = rng.UniformInt(dim.num_categories);
    } else if (!dim.grid.empty()) {
      x[d] = dim.grid[rng.UniformInt(static_cast<int>(dim.grid.size()))];
    } else {
      x[d] = rng.Uniform();
    }
  }
  Canonicalize(x);
  return x;
}

Eigen::VectorXd MixedSpace::Halton(int64_t index, uint64_t seed) const {
  Eigen::VectorXd x(size());
  if (index == 0) {
    for (int d = 0; d < size(); ++d) x[d] = IsCategorical(d) ? 0.0 : 0.5;
    Canonicalize(x);
    return x;
  }
  Rng rng(MixSeed(seed, 0x4A17, 0));
  constexpr int kNumPrimes = sizeof(kPrimes) / sizeof(kPrimes[0]);
  for (int d = 0; d < size(); ++d) {
    const double shift = rng.Uniform();
    double u;
    if (d < kNumPrimes) {
      u = RadicalInverse(index, kPrimes[d]) + shift;
      u -= std::floor(u);
    } else {
      // Beyond the prime table fall back to seeded uniform draws.
      Rng extra(MixSeed(seed, static_cast<uint64_t>(index), d));
      u = extra.Uniform();
    }
    const Dimension& dim = dims_[d];
    if (dim.kind == Dimension::Kind::kCategorical) {
      x[d] = std::min(std::floor(u * dim.num_categories),
                      static_cast<double>(dim.num_categories - 1));
    } else if (!dim.grid.empty()) {
      const int n = static_cast<int>(dim.grid.size());
      x[d] = dim.grid[std::min(static_cast<int>(u * n), n - 1)];
    } else {
      x[d] = u;
    }
  }
  Canonicalize(x);
  return x;
}

}  // namespace cairn::gp
