// ValidateSearchSpace (spec_validation.h): checks of every parameter of a
// study's search space, conditional children included.
#include <cctype>
#include <cmath>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "tuner/spec_validation.h"
#include "tuner/validation_errors.h"
#include "util/number_text.h"
#include "util/quote.h"

namespace cairn::tuner {
namespace {

using cairn::v1::ConditionalParameterSpec;
using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;
using util::RoundTripNumber;
using validation::Bad;
using validation::Quote;
using validation::ScaleName;
using validation::TypeName;
using validation::Where;

// Largest magnitude at which every integer is exactly representable.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
// Bounds the work and memory of one parameter's grid.
constexpr int kMaxGridResolution = 100000;

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

}  // namespace cairn::tuner
