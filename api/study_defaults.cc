// See study_defaults.h.
#include "api/study_defaults.h"

#include <limits>

#include "absl/random/random.h"

namespace cairn::api {

using cairn::v1::StudySpec;

StudySpec::Algorithm EffectiveAlgorithm(StudySpec::Algorithm algorithm) {
  return algorithm == StudySpec::ALGORITHM_UNSPECIFIED ? kDefaultAlgorithm
                                                       : algorithm;
}

int64_t NewRandomSeed() {
  thread_local absl::BitGen gen;  // Seeded from the OS per thread.
  return absl::Uniform<int64_t>(absl::IntervalClosed, gen, 1,
                                std::numeric_limits<int32_t>::max());
}

void ApplyStudyDefaults(int64_t random_seed, StudySpec& spec) {
  spec.set_algorithm(EffectiveAlgorithm(spec.algorithm()));
  if (spec.seed() == 0) spec.set_seed(random_seed);
}

}  // namespace cairn::api
