// Validation of study specs, manually created trials and measurements. Every
// error is InvalidArgument and names the offending field path and value, e.g.
//   parameters[1] (lr): min_value 0 must be > 0 for UNIT_LOG_SCALE
// so the service can return it to the client unchanged.
//
// All functions are pure and thread-safe.
#ifndef CAIRN_TUNER_SPEC_VALIDATION_H_
#define CAIRN_TUNER_SPEC_VALIDATION_H_

#include <vector>

#include "absl/status/status.h"
#include "cairn/v1/study.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace cairn::tuner {

// Checks a whole StudySpec: the search space (ValidateSearchSpace below), the
// metrics (at least one; non-empty, distinct metric_id; goal MAXIMIZE or
// MINIMIZE; finite safety_threshold), the algorithm (a known enum value),
// max_trials / max_parallel_trials / max_failed_trials (>= 0; 0 = unlimited),
// early_stopping (non-negative steps and counts, reduction_factor 0 or > 1,
// max_resource 0 or >= min_resource) and, when present, job_template
// (non-empty command, gpus_per_trial >= 0, max_restarts >= 0, non-negative
// max_running_time, env names non-empty without '='). Any seed is valid.
// Returns OK or InvalidArgument naming the first problem found.
absl::Status ValidateStudySpec(const cairn::v1::StudySpec& spec);

// Checks only spec.parameters (the search space):
// - at least one parameter (none allowed when max_trials is 1); parameter_id
// non-empty, without '=' or
//   whitespace, unique across the whole tree (conditional children included);
// - type is DOUBLE, INTEGER, CATEGORICAL or DISCRETE;
// - DOUBLE/INTEGER: finite bounds, min_value <= max_value, INTEGER bounds
//   integral and within +-2^53; UNIT_LOG_SCALE / UNIT_REVERSE_LOG_SCALE need
//   min_value > 0;
//   grid_resolution in [0, 100000];
// - CATEGORICAL: at least one value, values non-empty and distinct, no
//   scale_type;
// - DISCRETE: at least one value, finite, strictly increasing; log scales need
//   every value > 0;
// - fields of another type (categorical_values on a DOUBLE, bounds on a
//   CATEGORICAL...) are rejected rather than silently ignored;
// - conditional children: the parent is CATEGORICAL, INTEGER or DISCRETE;
//   exactly the matching parent_*_values list is set, non-empty, and names
//   only values the parent can take.
// - conditional parameters nest at most kMaxConditionalDepth deep
//   (api/limits.h; the other input limits are checked by
//   api::CheckRequestLimits in api/request_limits.h).
absl::Status ValidateSearchSpace(const cairn::v1::StudySpec& spec);

// Checks the parameters of a manually created trial (CreateTrial) against a
// valid spec: every parameter active under the given parent values is present
// exactly once; no unknown, duplicate or inactive parameter; numbers
// (number_value) for DOUBLE/INTEGER/DISCRETE and strings (string_value) for
// CATEGORICAL; values finite, INTEGER values integral, DOUBLE/INTEGER within
// bounds, DISCRETE/CATEGORICAL values in their set. Errors name the entry as
// "parameters[i] (id)". Returns InvalidArgument also when `spec` itself is
// invalid.
absl::Status ValidateTrialParameters(
    const cairn::v1::StudySpec& spec,
    const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params);
absl::Status ValidateTrialParameters(
    const cairn::v1::StudySpec& spec,
    const std::vector<cairn::v1::Parameter>& params);

// Checks a measurement on its own (AddTrialMeasurement): step_count >= 0,
// non-negative elapsed_duration, every metric_id non-empty and unique, every
// value finite. Metrics not named in the spec are allowed: intermediate
// measurements may carry extra tracking metrics ("accuracy", "lr").
absl::Status ValidateMeasurement(const cairn::v1::Measurement& measurement);

// Checks a final measurement (CompleteTrial): ValidateMeasurement plus every
// metric of spec.metrics present. Extra metrics are allowed.
absl::Status ValidateFinalMeasurement(
    const cairn::v1::StudySpec& spec,
    const cairn::v1::Measurement& measurement);

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_SPEC_VALIDATION_H_
