// QUASI_RANDOM_SEARCH designer: scrambled Halton sequence.
#include "tuner/quasi_random_designer.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tuner/designer_util.h"
#include "tuner/internal.h"

namespace cairn::tuner {
namespace {

// The first n primes.
std::vector<uint64_t> FirstPrimes(int n) {
  std::vector<uint64_t> primes;
  for (uint64_t c = 2; static_cast<int>(primes.size()) < n; ++c) {
    bool prime = true;
    for (uint64_t p : primes) {
      if (p * p > c) break;
      if (c % p == 0) {
        prime = false;
        break;
      }
    }
    if (prime) primes.push_back(c);
  }
  return primes;
}

// Replacement points are taken this far down the sequence.
constexpr uint64_t kAttemptStride = uint64_t{1} << 40;

}  // namespace

QuasiRandomDesigner::QuasiRandomDesigner(SearchSpace space, int64_t seed)
    : space_(std::move(space)) {
  const std::vector<uint64_t> primes = FirstPrimes(space_.size());
  for (int j = 0; j < space_.size(); ++j) {
    Dimension dim;
    dim.base = primes[j];
    // Digits until base^K >= 2^53: finer digits are below double precision.
    double reach = 1.0;
    for (int k = 0; reach < 0x1.0p53; ++k) {
      internal::Rng rng(internal::HashSeed(static_cast<uint64_t>(seed), j, k,
                                           0x68616c74));  // "halt"
      dim.digits.push_back({1 + rng.Below(dim.base - 1), rng.Below(dim.base)});
      reach *= static_cast<double>(dim.base);
    }
    dims_.push_back(std::move(dim));
  }
}

absl::StatusOr<std::unique_ptr<Designer>> QuasiRandomDesigner::Create(
    const cairn::v1::StudySpec& spec) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  return std::unique_ptr<Designer>(
      new QuasiRandomDesigner(*std::move(space), spec.seed()));
}

std::vector<double> QuasiRandomDesigner::Point(uint64_t index) const {
  std::vector<double> unit(dims_.size());
  for (size_t j = 0; j < dims_.size(); ++j) {
    const Dimension& dim = dims_[j];
    const double inv_base = 1.0 / static_cast<double>(dim.base);
    uint64_t n = index;
    double scale = inv_base;
    double x = 0.0;
    // Every digit position is scrambled, also the leading zeros of n, so the
    // point is uniform over [0, 1) and not biased towards 0.
    for (const DigitScramble& s : dim.digits) {
      const uint64_t digit = n % dim.base;
      n /= dim.base;
      x += static_cast<double>((s.a * digit + s.c) % dim.base) * scale;
      scale *= inv_base;
    }
    unit[j] = x < 1.0 ? x : 0x1.fffffffffffffp-1;
  }
  return unit;
}

absl::StatusOr<std::vector<Suggestion>> QuasiRandomDesigner::Suggest(
    const DesignerContext& context, int count) {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("count ", count, " must be >= 1"));
  }
  return internal::SuggestDistinct(
      space_, context, count, [this](uint64_t index, uint64_t attempt) {
        return Point(index + attempt * kAttemptStride);
      });
}

}  // namespace cairn::tuner
