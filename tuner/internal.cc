// Helpers shared by the tuner's implementation files.
#include "tuner/internal.h"

namespace cairn::tuner::internal {

uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t HashSeed(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t h = Mix64(a + 0x9e3779b97f4a7c15ULL);
  h = Mix64(h ^ (b + 0x632be59bd9b4e019ULL));
  h = Mix64(h ^ (c + 0x85ebca77c2b2ae63ULL));
  h = Mix64(h ^ (d + 0x27d4eb2f165667c5ULL));
  return h;
}

uint64_t Rng::Below(uint64_t n) {
  if (n <= 1) return 0;
  // Rejection sampling on the largest multiple of n.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return x % n;
}

}  // namespace cairn::tuner::internal
