// Validation of study specs, manual trials and measurements. The search
// space and the job template are checked in search_space_validation.cc and
// job_template_validation.cc.
#include "tuner/spec_validation.h"

#include <cmath>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tuner/job_template_validation.h"
#include "tuner/search_space.h"
#include "tuner/validation_errors.h"
#include "util/number_text.h"

namespace cairn::tuner {
namespace {

using cairn::v1::MetricSpec;
using cairn::v1::StudySpec;
using util::RoundTripNumber;
using validation::Bad;
using validation::Quote;
using validation::Where;

absl::Status ValidateMetrics(const StudySpec& spec) {
  if (spec.metrics_size() == 0) {
    return absl::InvalidArgumentError(
        "metrics: is empty; at least one metric is required");
  }
  absl::flat_hash_map<std::string, int> seen;
  for (int i = 0; i < spec.metrics_size(); ++i) {
    const MetricSpec& m = spec.metrics(i);
    const std::string path = absl::StrCat("metrics[", i, "]");
    const std::string where = Where(path, m.metric_id());
    if (m.metric_id().empty()) return Bad(path, "metric_id is empty");
    auto [it, inserted] = seen.emplace(m.metric_id(), i);
    if (!inserted) {
      return Bad(where,
                 absl::StrCat("duplicate metric_id ", Quote(m.metric_id()),
                              " (also at metrics[", it->second, "])"));
    }
    if (m.goal() != MetricSpec::MAXIMIZE && m.goal() != MetricSpec::MINIMIZE) {
      const std::string goal =
          MetricSpec::Goal_IsValid(m.goal())
              ? MetricSpec::Goal_Name(static_cast<MetricSpec::Goal>(m.goal()))
              : absl::StrCat(m.goal());
      return Bad(where,
                 absl::StrCat("goal ", goal, " must be MAXIMIZE or MINIMIZE"));
    }
    if (m.has_safety_threshold() && !std::isfinite(m.safety_threshold())) {
      return Bad(where, absl::StrCat("safety_threshold ",
                                     RoundTripNumber(m.safety_threshold()),
                                     " is not finite"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateEarlyStopping(const StudySpec& spec) {
  if (!spec.has_early_stopping()) return absl::OkStatus();
  const cairn::v1::EarlyStoppingConfig& es = spec.early_stopping();
  if (es.has_median()) {
    if (es.median().min_steps() < 0) {
      return Bad("early_stopping.median.min_steps",
                 absl::StrCat(es.median().min_steps(), " must be >= 0"));
    }
    if (es.median().min_completed_trials() < 0) {
      return Bad(
          "early_stopping.median.min_completed_trials",
          absl::StrCat(es.median().min_completed_trials(), " must be >= 0"));
    }
  }
  if (es.has_asha()) {
    const auto& a = es.asha();
    if (a.min_resource() < 0) {
      return Bad("early_stopping.asha.min_resource",
                 absl::StrCat(a.min_resource(), " must be >= 0"));
    }
    if (!std::isfinite(a.reduction_factor()) ||
        (a.reduction_factor() != 0 && a.reduction_factor() <= 1)) {
      return Bad("early_stopping.asha.reduction_factor",
                 absl::StrCat(RoundTripNumber(a.reduction_factor()),
                              " must be > 1 (or 0 for the default 3)"));
    }
    if (a.max_resource() < 0 ||
        (a.max_resource() > 0 && a.max_resource() < a.min_resource())) {
      return Bad("early_stopping.asha.max_resource",
                 absl::StrCat(a.max_resource(),
                              " must be 0 (no limit) or >= min_resource ",
                              a.min_resource()));
    }
  }
  return absl::OkStatus();
}

template <typename Container>
absl::Status ValidateTrialParametersImpl(const StudySpec& spec,
                                         const Container& params) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  return space->ParseParameters(params).status();
}

}  // namespace

absl::Status ValidateStudySpec(const StudySpec& spec) {
  if (absl::Status s = ValidateSearchSpace(spec); !s.ok()) return s;
  if (absl::Status s = ValidateMetrics(spec); !s.ok()) return s;
  if (!StudySpec::Algorithm_IsValid(spec.algorithm())) {
    return Bad("algorithm",
               absl::StrCat(spec.algorithm(), " is not a known algorithm"));
  }
  if (spec.max_trials() < 0) {
    return Bad("max_trials", absl::StrCat(spec.max_trials(),
                                          " must be >= 0 (0 means unlimited)"));
  }
  if (spec.max_parallel_trials() < 0) {
    return Bad("max_parallel_trials",
               absl::StrCat(spec.max_parallel_trials(),
                            " must be >= 0 (0 means unlimited)"));
  }
  if (spec.max_failed_trials() < 0) {
    return Bad("max_failed_trials",
               absl::StrCat(spec.max_failed_trials(),
                            " must be >= 0 (0 means unlimited)"));
  }
  if (absl::Status s = ValidateEarlyStopping(spec); !s.ok()) return s;
  return ValidateJobTemplateShape(spec);
}

absl::Status ValidateTrialParameters(
    const StudySpec& spec,
    const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params) {
  return ValidateTrialParametersImpl(spec, params);
}

absl::Status ValidateTrialParameters(
    const StudySpec& spec, const std::vector<cairn::v1::Parameter>& params) {
  return ValidateTrialParametersImpl(spec, params);
}

absl::Status ValidateMeasurement(const cairn::v1::Measurement& measurement) {
  if (measurement.step_count() < 0) {
    return Bad("measurement.step_count",
               absl::StrCat(measurement.step_count(), " must be >= 0"));
  }
  if (measurement.has_elapsed_duration() &&
      (measurement.elapsed_duration().seconds() < 0 ||
       measurement.elapsed_duration().nanos() < 0)) {
    return Bad("measurement.elapsed_duration",
               absl::StrCat(measurement.elapsed_duration().seconds(), "s ",
                            measurement.elapsed_duration().nanos(),
                            "ns must not be negative"));
  }
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < measurement.metrics_size(); ++i) {
    const cairn::v1::Metric& m = measurement.metrics(i);
    const std::string path = absl::StrCat("measurement.metrics[", i, "]");
    if (m.metric_id().empty()) return Bad(path, "metric_id is empty");
    const std::string where = Where(path, m.metric_id());
    if (!seen.insert(m.metric_id()).second) {
      return Bad(where,
                 absl::StrCat("duplicate metric_id ", Quote(m.metric_id())));
    }
    if (!std::isfinite(m.value())) {
      return Bad(where, absl::StrCat("value ", RoundTripNumber(m.value()),
                                     " is not finite"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateFinalMeasurement(
    const StudySpec& spec, const cairn::v1::Measurement& measurement) {
  if (absl::Status s = ValidateMeasurement(measurement); !s.ok()) return s;
  absl::flat_hash_set<std::string> present;
  for (const cairn::v1::Metric& m : measurement.metrics()) {
    present.insert(m.metric_id());
  }
  for (int i = 0; i < spec.metrics_size(); ++i) {
    if (!present.contains(spec.metrics(i).metric_id())) {
      return Bad(
          "final_measurement.metrics",
          absl::StrCat("missing metric ", Quote(spec.metrics(i).metric_id()),
                       " of the study (metrics[", i, "])"));
    }
  }
  return absl::OkStatus();
}

}  // namespace cairn::tuner
