// Validation of study specs, manual trials and measurements.
#include "tuner/spec_validation.h"

#include <cctype>
#include <cmath>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/limits.h"
#include "tuner/internal.h"
#include "tuner/search_space.h"
#include "util/number_text.h"
#include "util/quote.h"

namespace cairn::tuner {
namespace {

using cairn::v1::ConditionalParameterSpec;
using cairn::v1::MetricSpec;
using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;
using util::RoundTripNumber;

// Largest magnitude at which every integer is exactly representable.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
// Bounds the work and memory of one parameter's grid.
constexpr int kMaxGridResolution = 100000;

std::string Quote(const std::string& s) { return util::QuoteForError(s); }

// "parameters[1] (lr)" or "parameters[1]" when the id is empty; at most 64
// characters of the id.
std::string Where(const std::string& path, const std::string& id) {
  if (id.empty()) return path;
  return absl::StrCat(path, " (", util::ShortenForError(id, 64), ")");
}

absl::Status Bad(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

std::string TypeName(int type) {
  if (ParameterSpec::Type_IsValid(type)) {
    return ParameterSpec::Type_Name(static_cast<ParameterSpec::Type>(type));
  }
  return absl::StrCat(type);
}

std::string ScaleName(int scale) {
  if (ParameterSpec::ScaleType_IsValid(scale)) {
    return ParameterSpec::ScaleType_Name(
        static_cast<ParameterSpec::ScaleType>(scale));
  }
  return absl::StrCat(scale);
}

bool IsLogScale(int scale) {
  return scale == ParameterSpec::UNIT_LOG_SCALE ||
         scale == ParameterSpec::UNIT_REVERSE_LOG_SCALE;
}

class SpaceValidator {
 public:
  // `depth`: how many conditional parameters this one is nested in. The
  // recursion stops at kMaxConditionalDepth.
  absl::Status ValidateParameter(const ParameterSpec& p,
                                 const std::string& path, int depth = 0) {
    if (depth > cairn::api::kMaxConditionalDepth) {
      return Bad(util::ShortenForError(path, 500),
                 absl::StrCat("conditional parameters nest more than the "
                              "limit of ",
                              cairn::api::kMaxConditionalDepth, " deep"));
    }
    const std::string& id = p.parameter_id();
    const std::string where = Where(path, id);
    if (id.empty()) return Bad(path, "parameter_id is empty");
    for (char c : id) {
      if (c == '=' || std::isspace(static_cast<unsigned char>(c)) ||
          std::iscntrl(static_cast<unsigned char>(c))) {
        return Bad(where, absl::StrCat("parameter_id ", Quote(id),
                                       " must not contain '=', whitespace or "
                                       "control characters"));
      }
    }
    auto [it, inserted] = seen_.emplace(id, path);
    if (!inserted) {
      return Bad(where, absl::StrCat("duplicate parameter_id ", Quote(id),
                                     " (also at ", it->second, ")"));
    }
    if (!ParameterSpec::ScaleType_IsValid(p.scale_type())) {
      return Bad(where,
                 absl::StrCat("scale_type ", p.scale_type(), " is unknown"));
    }
    if (p.grid_resolution() < 0 || p.grid_resolution() > kMaxGridResolution) {
      return Bad(where, absl::StrCat("grid_resolution ", p.grid_resolution(),
                                     " must be in [0, ", kMaxGridResolution,
                                     "] (0 means 10)"));
    }
    switch (p.type()) {
      case ParameterSpec::DOUBLE:
      case ParameterSpec::INTEGER:
        if (absl::Status s = ValidateRange(p, where); !s.ok()) return s;
        break;
      case ParameterSpec::CATEGORICAL:
        if (absl::Status s = ValidateCategorical(p, where); !s.ok()) return s;
        break;
      case ParameterSpec::DISCRETE:
        if (absl::Status s = ValidateDiscrete(p, where); !s.ok()) return s;
        break;
      default:
        return Bad(where, absl::StrCat("type ", TypeName(p.type()),
                                       " is not DOUBLE, INTEGER, CATEGORICAL "
                                       "or DISCRETE"));
    }
    for (int j = 0; j < p.conditional_parameter_specs_size(); ++j) {
      const ConditionalParameterSpec& c = p.conditional_parameter_specs(j);
      const std::string child_path =
          absl::StrCat(path, ".conditional_parameter_specs[", j, "]");
      if (absl::Status s = ValidateCondition(p, c, where, child_path);
          !s.ok()) {
        return s;
      }
      if (absl::Status s = ValidateParameter(
              c.parameter_spec(), absl::StrCat(child_path, ".parameter_spec"),
              depth + 1);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ValidateRange(const ParameterSpec& p, const std::string& where) {
    const bool integer = p.type() == ParameterSpec::INTEGER;
    const std::string type = TypeName(p.type());
    if (p.categorical_values_size() > 0) {
      return Bad(where,
                 absl::StrCat("categorical_values must be empty for ", type,
                              " (found ", Quote(p.categorical_values(0)), ")"));
    }
    if (p.discrete_values_size() > 0) {
      return Bad(
          where,
          absl::StrCat("discrete_values must be empty for ", type, " (found ",
                       RoundTripNumber(p.discrete_values(0)), ")"));
    }
    const double lo = p.min_value(), hi = p.max_value();
    if (!std::isfinite(lo)) {
      return Bad(where, absl::StrCat("min_value ", RoundTripNumber(lo),
                                     " is not finite"));
    }
    if (!std::isfinite(hi)) {
      return Bad(where, absl::StrCat("max_value ", RoundTripNumber(hi),
                                     " is not finite"));
    }
    if (lo > hi) {
      return Bad(where, absl::StrCat("min_value ", RoundTripNumber(lo),
                                     " is greater than max_value ",
                                     RoundTripNumber(hi)));
    }
    if (!std::isfinite(hi - lo)) {
      return Bad(where, absl::StrCat("range [", RoundTripNumber(lo), ", ",
                                     RoundTripNumber(hi), "] is too wide"));
    }
    if (integer) {
      for (auto [name, v] : {std::pair<const char*, double>{"min_value", lo},
                             {"max_value", hi}}) {
        if (v != std::floor(v)) {
          return Bad(where, absl::StrCat(name, " ", RoundTripNumber(v),
                                         " is not an integer (INTEGER)"));
        }
        if (std::fabs(v) > kMaxExactInteger) {
          return Bad(where, absl::StrCat(name, " ", RoundTripNumber(v),
                                         " is outside +-2^53 (INTEGER)"));
        }
      }
    }
    if (IsLogScale(p.scale_type()) && lo <= 0) {
      return Bad(where,
                 absl::StrCat("min_value ", RoundTripNumber(lo),
                              " must be > 0 for ", ScaleName(p.scale_type())));
    }
    return absl::OkStatus();
  }

  absl::Status ValidateCategorical(const ParameterSpec& p,
                                   const std::string& where) {
    if (p.scale_type() != ParameterSpec::SCALE_TYPE_UNSPECIFIED) {
      return Bad(where, absl::StrCat("scale_type ", ScaleName(p.scale_type()),
                                     " is not allowed for CATEGORICAL"));
    }
    if (absl::Status s = NoBounds(p, where); !s.ok()) return s;
    if (p.discrete_values_size() > 0) {
      return Bad(where,
                 absl::StrCat("discrete_values must be empty for CATEGORICAL "
                              "(found ",
                              RoundTripNumber(p.discrete_values(0)), ")"));
    }
    if (p.categorical_values_size() == 0) {
      return Bad(where, "categorical_values is empty (CATEGORICAL)");
    }
    absl::flat_hash_set<std::string> seen;
    for (int k = 0; k < p.categorical_values_size(); ++k) {
      const std::string& v = p.categorical_values(k);
      if (v.empty()) {
        return Bad(where, absl::StrCat("categorical_values[", k, "] is empty"));
      }
      if (!seen.insert(v).second) {
        return Bad(where, absl::StrCat("categorical_values[", k, "] ", Quote(v),
                                       " is a duplicate"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ValidateDiscrete(const ParameterSpec& p,
                                const std::string& where) {
    if (absl::Status s = NoBounds(p, where); !s.ok()) return s;
    if (p.categorical_values_size() > 0) {
      return Bad(where, absl::StrCat("categorical_values must be empty for "
                                     "DISCRETE (found ",
                                     Quote(p.categorical_values(0)), ")"));
    }
    if (p.discrete_values_size() == 0) {
      return Bad(where, "discrete_values is empty (DISCRETE)");
    }
    for (int k = 0; k < p.discrete_values_size(); ++k) {
      const double v = p.discrete_values(k);
      if (!std::isfinite(v)) {
        return Bad(where, absl::StrCat("discrete_values[", k, "] ",
                                       RoundTripNumber(v), " is not finite"));
      }
      if (k > 0 && v <= p.discrete_values(k - 1)) {
        return Bad(where,
                   absl::StrCat("discrete_values[", k, "] ", RoundTripNumber(v),
                                " is not greater than the previous "
                                "value ",
                                RoundTripNumber(p.discrete_values(k - 1)),
                                " (values must be strictly "
                                "increasing)"));
      }
      if (IsLogScale(p.scale_type()) && v <= 0) {
        return Bad(where, absl::StrCat("discrete_values[", k, "] ",
                                       RoundTripNumber(v), " must be > 0 for ",
                                       ScaleName(p.scale_type())));
      }
    }
    return absl::OkStatus();
  }

  absl::Status NoBounds(const ParameterSpec& p, const std::string& where) {
    if (p.min_value() != 0 || p.max_value() != 0) {
      return Bad(where, absl::StrCat("min_value/max_value (",
                                     RoundTripNumber(p.min_value()), ", ",
                                     RoundTripNumber(p.max_value()),
                                     ") are not used by ", TypeName(p.type()),
                                     "; leave them unset"));
    }
    return absl::OkStatus();
  }

  // Checks the parent_*_values of child `c` of parent `p`.
  absl::Status ValidateCondition(const ParameterSpec& p,
                                 const ConditionalParameterSpec& c,
                                 const std::string& parent_where,
                                 const std::string& path) {
    const std::string child_id = c.parameter_spec().parameter_id();
    const std::string where = Where(path, child_id);
    switch (p.type()) {
      case ParameterSpec::CATEGORICAL:
        return ValidateCategoricalCondition(p, c, parent_where, where);
      case ParameterSpec::INTEGER:
        return ValidateIntegerCondition(p, c, parent_where, where);
      case ParameterSpec::DISCRETE:
        return ValidateDiscreteCondition(p, c, parent_where, where);
      default:
        return Bad(where, absl::StrCat("parent ", parent_where, " is ",
                                       TypeName(p.type()),
                                       "; conditional parameters need a "
                                       "CATEGORICAL, INTEGER or DISCRETE "
                                       "parent"));
    }
  }

  // The child of a CATEGORICAL parent names parent_categorical_values only.
  static absl::Status ValidateCategoricalCondition(
      const ParameterSpec& p, const ConditionalParameterSpec& c,
      const std::string& parent_where, const std::string& where) {
    const int n_cat = c.parent_categorical_values_size();
    if (c.parent_int_values_size() > 0 || c.parent_discrete_values_size() > 0) {
      return Bad(where, "parent " + parent_where +
                            " is CATEGORICAL: use parent_categorical_values, "
                            "not parent_int_values/parent_discrete_values");
    }
    if (n_cat == 0) {
      return Bad(where, "parent_categorical_values is empty");
    }
    absl::flat_hash_set<std::string> values(p.categorical_values().begin(),
                                            p.categorical_values().end());
    for (int k = 0; k < n_cat; ++k) {
      if (!values.contains(c.parent_categorical_values(k))) {
        return Bad(where,
                   absl::StrCat("parent_categorical_values[", k, "] ",
                                Quote(c.parent_categorical_values(k)),
                                " is not a value of parent ", parent_where));
      }
    }
    return absl::OkStatus();
  }

  // The child of an INTEGER parent names parent_int_values within its bounds.
  static absl::Status ValidateIntegerCondition(
      const ParameterSpec& p, const ConditionalParameterSpec& c,
      const std::string& parent_where, const std::string& where) {
    const int n_int = c.parent_int_values_size();
    if (c.parent_categorical_values_size() > 0 ||
        c.parent_discrete_values_size() > 0) {
      return Bad(where, "parent " + parent_where +
                            " is INTEGER: use parent_int_values, not "
                            "parent_categorical_values/parent_discrete_values");
    }
    if (n_int == 0) return Bad(where, "parent_int_values is empty");
    for (int k = 0; k < n_int; ++k) {
      const double v = static_cast<double>(c.parent_int_values(k));
      if (v < p.min_value() || v > p.max_value()) {
        return Bad(where, absl::StrCat("parent_int_values[", k, "] ",
                                       c.parent_int_values(k), " is outside [",
                                       RoundTripNumber(p.min_value()), ", ",
                                       RoundTripNumber(p.max_value()),
                                       "] of parent ", parent_where));
      }
    }
    return absl::OkStatus();
  }

  // The child of a DISCRETE parent names parent_discrete_values of its set.
  static absl::Status ValidateDiscreteCondition(
      const ParameterSpec& p, const ConditionalParameterSpec& c,
      const std::string& parent_where, const std::string& where) {
    const int n_disc = c.parent_discrete_values_size();
    if (c.parent_categorical_values_size() > 0 ||
        c.parent_int_values_size() > 0) {
      return Bad(where, "parent " + parent_where +
                            " is DISCRETE: use parent_discrete_values, not "
                            "parent_categorical_values/parent_int_values");
    }
    if (n_disc == 0) return Bad(where, "parent_discrete_values is empty");
    for (int k = 0; k < n_disc; ++k) {
      const double v = c.parent_discrete_values(k);
      bool found = false;
      for (double d : p.discrete_values()) found = found || d == v;
      if (!found) {
        return Bad(
            where,
            absl::StrCat("parent_discrete_values[", k, "] ", RoundTripNumber(v),
                         " is not a value of parent ", parent_where));
      }
    }
    return absl::OkStatus();
  }

  // parameter_id -> path of its first occurrence.
  absl::flat_hash_map<std::string, std::string> seen_;
};

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

// Bounds of a multi-replica template: replicas of one group, GPUs of one
// replica, processes of one trial.
constexpr int kMaxReplicasPerGroup = 64;
constexpr int kMaxGpusPerReplica = 16;
constexpr int kMaxReplicasPerTrial = 128;

absl::Status ValidateReplicaGroup(const cairn::v1::ReplicaGroup& g, int i) {
  const std::string where = absl::StrCat("job_template.replicas[", i, "]");
  if (g.type() == cairn::v1::ReplicaGroup::TYPE_UNSPECIFIED) {
    return Bad(where + ".type",
               "is unset; one of MASTER, WORKER, PARAMETER_SERVER, EVALUATOR");
  }
  if (g.count() < 0 || g.count() > kMaxReplicasPerGroup) {
    return Bad(where + ".count", absl::StrCat(g.count(), " must be in [0, ",
                                              kMaxReplicasPerGroup, "]"));
  }
  if (g.gpus_per_replica() < 0 || g.gpus_per_replica() > kMaxGpusPerReplica) {
    return Bad(where + ".gpus_per_replica",
               absl::StrCat(g.gpus_per_replica(), " must be in [0, ",
                            kMaxGpusPerReplica, "]"));
  }
  if (g.type() == cairn::v1::ReplicaGroup::MASTER && g.count() != 1) {
    return Bad(where + ".count",
               absl::StrCat(g.count(),
                            " for MASTER; there is exactly one "
                            "master (count 1)"));
  }
  return absl::OkStatus();
}

// Multi-replica templates: each type at most once, exactly one MASTER
// group (count 1), bounded counts and GPUs; GPUs come from
// gpus_per_replica, not gpus_per_trial.
absl::Status ValidateReplicas(const cairn::v1::TrialJobTemplate& t) {
  if (t.replicas().empty()) return absl::OkStatus();
  std::set<int> types;
  int total = 0;
  for (int i = 0; i < t.replicas_size(); ++i) {
    const cairn::v1::ReplicaGroup& g = t.replicas(i);
    if (absl::Status s = ValidateReplicaGroup(g, i); !s.ok()) return s;
    if (!types.insert(g.type()).second) {
      return Bad(absl::StrCat("job_template.replicas[", i, "].type"),
                 absl::StrCat(cairn::v1::ReplicaGroup::Type_Name(g.type()),
                              " appears twice; give each type one group"));
    }
    total += g.count();
  }
  if (types.count(cairn::v1::ReplicaGroup::MASTER) == 0) {
    return Bad("job_template.replicas",
               "has no MASTER group; exactly one MASTER with count 1 is "
               "required");
  }
  if (total > kMaxReplicasPerTrial) {
    return Bad("job_template.replicas",
               absl::StrCat(total, " replicas in all; at most ",
                            kMaxReplicasPerTrial, " per trial"));
  }
  if (t.gpus_per_trial() != 0) {
    return Bad("job_template.gpus_per_trial",
               absl::StrCat(t.gpus_per_trial(),
                            " with replicas; set replicas[].gpus_per_replica "
                            "instead"));
  }
  return absl::OkStatus();
}

absl::Status ValidateJobTemplate(const StudySpec& spec) {
  if (!spec.has_job_template()) return absl::OkStatus();
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  if (t.command_size() == 0 || t.command(0).empty()) {
    return Bad("job_template.command",
               "is empty; name the training program to run");
  }
  if (t.gpus_per_trial() < 0) {
    return Bad("job_template.gpus_per_trial",
               absl::StrCat(t.gpus_per_trial(), " must be >= 0"));
  }
  if (t.max_restarts() < 0) {
    return Bad("job_template.max_restarts",
               absl::StrCat(t.max_restarts(), " must be >= 0"));
  }
  if (t.has_max_running_time() && (t.max_running_time().seconds() < 0 ||
                                   t.max_running_time().nanos() < 0)) {
    return Bad(
        "job_template.max_running_time",
        absl::StrCat(t.max_running_time().seconds(), "s ",
                     t.max_running_time().nanos(), "ns must not be negative"));
  }
  for (const auto& [name, value] : t.env()) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return Bad("job_template.env", absl::StrCat("variable name ", Quote(name),
                                                  " must be non-empty and "
                                                  "without '='"));
    }
  }
  return ValidateReplicas(t);
}

template <typename Container>
absl::Status ValidateTrialParametersImpl(const StudySpec& spec,
                                         const Container& params) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(spec);
  if (!space.ok()) return space.status();
  return space->ParseParameters(params).status();
}

}  // namespace

absl::Status ValidateSearchSpace(const StudySpec& spec) {
  // An empty space has one point: allowed for a study of one trial (an AI
  // Platform training job without hyperparameters).
  if (spec.parameters_size() == 0 && spec.max_trials() != 1) {
    return absl::InvalidArgumentError(
        "parameters: the search space is empty; at least one parameter is "
        "required (or max_trials 1)");
  }
  SpaceValidator validator;
  for (int i = 0; i < spec.parameters_size(); ++i) {
    if (absl::Status s = validator.ValidateParameter(
            spec.parameters(i), absl::StrCat("parameters[", i, "]"));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

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
  return ValidateJobTemplate(spec);
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
