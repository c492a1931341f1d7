// Helpers shared by the tuner's implementation files; not part of its API.
#ifndef CAIRN_TUNER_INTERNAL_H_
#define CAIRN_TUNER_INTERNAL_H_

#include <cstdint>
#include <string>

namespace cairn::tuner::internal {

// SplitMix64 finalizer: a bijective, well-mixed hash of 64 bits.
uint64_t Mix64(uint64_t x);

// Hash of a sequence of 64-bit words, used to derive per-point seeds from
// (spec seed, point index, ...). Order-sensitive.
uint64_t HashSeed(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0);

// A small deterministic generator (SplitMix64 sequence). Its output depends on
// nothing but the seed, on every platform and standard library, which std::
// distributions do not guarantee.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  // Uniform in [0, 1), 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) for n >= 1, without modulo bias.
  uint64_t Below(uint64_t n);

 private:
  uint64_t state_;
};

}  // namespace cairn::tuner::internal

#endif  // CAIRN_TUNER_INTERNAL_H_
