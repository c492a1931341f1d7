// The defaults a study's spec gets when it is created, recorded in the
// stored spec so that every reader (describe, REST, the web UI, Prometheus
// labels) sees what actually runs and any run can be replayed: an unset
// algorithm is the GP bandit, and an unset seed (0) a random one.
#ifndef CAIRN_API_STUDY_DEFAULTS_H_
#define CAIRN_API_STUDY_DEFAULTS_H_

#include <cstdint>

#include "cairn/v1/study.pb.h"

namespace cairn::api {

// What ALGORITHM_UNSPECIFIED means (also for studies stored before their
// defaults were recorded).
inline constexpr cairn::v1::StudySpec::Algorithm kDefaultAlgorithm =
    cairn::v1::StudySpec::GP_BANDIT;

// `algorithm`, or kDefaultAlgorithm for ALGORITHM_UNSPECIFIED.
cairn::v1::StudySpec::Algorithm EffectiveAlgorithm(
    cairn::v1::StudySpec::Algorithm algorithm);

// A seed for a study created without one: uniform in [1, 2^31 - 1], from a
// source that differs between calls and processes. Thread-safe.
int64_t NewRandomSeed();

// Records the defaults in `spec`: ALGORITHM_UNSPECIFIED becomes
// kDefaultAlgorithm, and seed 0 (unset) becomes `random_seed`.
void ApplyStudyDefaults(int64_t random_seed, cairn::v1::StudySpec& spec);

}  // namespace cairn::api

#endif  // CAIRN_API_STUDY_DEFAULTS_H_
