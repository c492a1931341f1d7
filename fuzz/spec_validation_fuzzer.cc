// Feeds a serialized cairn.v1.StudySpec (as a client sends in CreateStudy) to
// the tuner's spec validation and, when valid, builds the search space from
// it. Checks that neither crashes nor trips a sanitizer, and that a spec
// ValidateStudySpec accepts also gives a SearchSpace.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cairn/v1/study.pb.h"
#include "tuner/search_space.h"
#include "tuner/spec_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::v1::StudySpec spec;
  if (!spec.ParseFromArray(data, static_cast<int>(size))) return 0;
  const bool search_space_ok = cairn::tuner::ValidateSearchSpace(spec).ok();
  if (!cairn::tuner::ValidateStudySpec(spec).ok()) return 0;
  if (!search_space_ok) abort();  // The whole spec is valid, its space too.
  if (!cairn::tuner::SearchSpace::Create(spec).ok()) abort();
  return 0;
}
