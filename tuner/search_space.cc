// The flattened search space: unit mapping, activity and canonical keys.
#include "tuner/search_space.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tuner/internal.h"
#include "tuner/spec_validation.h"
#include "util/number_text.h"
#include "util/quote.h"

namespace cairn::tuner {
namespace {

using cairn::v1::ParameterSpec;
using util::RoundTripNumber;

// Maps x in [lo, hi] (lo < hi) to [0, 1] under `scale`.
double ScaledToUnit(double x, double lo, double hi,
                    ParameterSpec::ScaleType scale) {
  x = std::clamp(x, lo, hi);
  double u;
  switch (scale) {
    case ParameterSpec::UNIT_LOG_SCALE:
      u = (std::log(x) - std::log(lo)) / (std::log(hi) - std::log(lo));
      break;
    case ParameterSpec::UNIT_REVERSE_LOG_SCALE:
      // Mirror image of the log scale: dense near hi.
      u = 1.0 - std::log((lo + hi - x) / lo) / std::log(hi / lo);
      break;
    default:
      u = (x - lo) / (hi - lo);
  }
  return std::clamp(u, 0.0, 1.0);
}

// Inverse of ScaledToUnit; exact at the end points.
double UnitToScaled(double u, double lo, double hi,
                    ParameterSpec::ScaleType scale) {
  if (!(u > 0.0)) return lo;  // Also maps NaN to lo.
  if (u >= 1.0) return hi;
  double x;
  switch (scale) {
    case ParameterSpec::UNIT_LOG_SCALE:
      x = std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
      break;
    case ParameterSpec::UNIT_REVERSE_LOG_SCALE:
      x = lo + hi - lo * std::exp((1.0 - u) * std::log(hi / lo));
      break;
    default:
      x = lo + u * (hi - lo);
  }
  return std::clamp(x, lo, hi);
}

std::string Quote(const std::string& s) { return util::QuoteForError(s); }

std::string DescribeValue(const google::protobuf::Value& v) {
  switch (v.kind_case()) {
    case google::protobuf::Value::kNumberValue:
      return RoundTripNumber(v.number_value());
    case google::protobuf::Value::kStringValue:
      return Quote(v.string_value());
    case google::protobuf::Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case google::protobuf::Value::kNullValue:
      return "null";
    case google::protobuf::Value::KIND_NOT_SET:
      return "(unset)";
    default:
      return "(a list or struct)";
  }
}

template <typename Container>
std::string CanonicalKeyImpl(const Container& params) {
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(params.size());
  for (const cairn::v1::Parameter& p : params) {
    const google::protobuf::Value& v = p.value();
    std::string repr;
    switch (v.kind_case()) {
      case google::protobuf::Value::kNumberValue: {
        const double x = v.number_value() == 0 ? 0.0 : v.number_value();
        repr = absl::StrFormat("n%.17g", x);
        break;
      }
      case google::protobuf::Value::kStringValue:
        repr =
            absl::StrCat("s", v.string_value().size(), ":", v.string_value());
        break;
      default:
        repr = absl::StrCat("x", v.ShortDebugString());
    }
    entries.emplace_back(p.parameter_id(), std::move(repr));
  }
  std::sort(entries.begin(), entries.end());
  std::string key;
  for (const auto& [id, repr] : entries) {
    absl::StrAppend(&key, id.size(), ":", id, "=", repr, ";");
  }
  return key;
}

}  // namespace

double FlatParameter::NumValues() const {
  switch (type) {
    case ParameterSpec::INTEGER:
      return max_value - min_value + 1;
    case ParameterSpec::DISCRETE:
      return static_cast<double>(discrete_values.size());
    case ParameterSpec::CATEGORICAL:
      return static_cast<double>(categories.size());
    default:
      return 0;
  }
}

absl::StatusOr<SearchSpace> SearchSpace::Create(
    const cairn::v1::StudySpec& spec) {
  if (absl::Status s = ValidateSearchSpace(spec); !s.ok()) return s;
  SearchSpace space;
  for (const ParameterSpec& p : spec.parameters()) {
    space.Flatten(p, -1, {}, 0);
  }
  return space;
}

void SearchSpace::Flatten(const ParameterSpec& p, int parent,
                          std::vector<double> parent_values, int depth) {
  const int idx = size();
  FlatParameter f;
  Mapping m;
  f.id = p.parameter_id();
  f.type = p.type();
  f.scale = p.scale_type() == ParameterSpec::SCALE_TYPE_UNSPECIFIED
                ? ParameterSpec::UNIT_LINEAR_SCALE
                : p.scale_type();
  f.grid_resolution = p.grid_resolution();
  f.parent = parent;
  f.parent_values = std::move(parent_values);
  f.depth = depth;
  switch (p.type()) {
    case ParameterSpec::DOUBLE:
      f.min_value = m.lo = p.min_value();
      f.max_value = m.hi = p.max_value();
      break;
    case ParameterSpec::INTEGER:
      f.min_value = p.min_value();
      f.max_value = p.max_value();
      m.lo = f.min_value - 0.5;
      m.hi = f.max_value + 0.5;
      break;
    case ParameterSpec::DISCRETE:
      f.discrete_values.assign(p.discrete_values().begin(),
                               p.discrete_values().end());
      f.min_value = m.lo = f.discrete_values.front();
      f.max_value = m.hi = f.discrete_values.back();
      for (double v : f.discrete_values) {
        m.discrete_unit.push_back(
            m.lo < m.hi ? ScaledToUnit(v, m.lo, m.hi, f.scale) : 0.5);
      }
      break;
    default:  // CATEGORICAL (the spec is valid).
      f.scale = ParameterSpec::SCALE_TYPE_UNSPECIFIED;
      f.categories.assign(p.categorical_values().begin(),
                          p.categorical_values().end());
      f.min_value = 0;
      f.max_value = static_cast<double>(f.categories.size()) - 1;
  }
  if (parent >= 0) {
    params_[parent].children.push_back(idx);
    conditional_ = true;
  }
  index_[f.id] = idx;
  params_.push_back(std::move(f));
  mappings_.push_back(std::move(m));

  for (const cairn::v1::ConditionalParameterSpec& c :
       p.conditional_parameter_specs()) {
    std::vector<double> values;
    switch (p.type()) {
      case ParameterSpec::CATEGORICAL:
        for (const std::string& v : c.parent_categorical_values()) {
          const auto& cats = params_[idx].categories;
          values.push_back(static_cast<double>(
              std::find(cats.begin(), cats.end(), v) - cats.begin()));
        }
        break;
      case ParameterSpec::INTEGER:
        for (int64_t v : c.parent_int_values()) {
          values.push_back(static_cast<double>(v));
        }
        break;
      default:  // DISCRETE.
        values.assign(c.parent_discrete_values().begin(),
                      c.parent_discrete_values().end());
    }
    Flatten(c.parameter_spec(), idx, std::move(values), depth + 1);
  }
}

int SearchSpace::IndexOf(std::string_view id) const {
  auto it = index_.find(std::string(id));
  return it == index_.end() ? -1 : it->second;
}

double SearchSpace::ToUnit(int i, double native) const {
  const FlatParameter& f = params_[i];
  const Mapping& m = mappings_[i];
  switch (f.type) {
    case ParameterSpec::CATEGORICAL: {
      const double n = static_cast<double>(f.categories.size());
      return (std::clamp(std::round(native), 0.0, n - 1) + 0.5) / n;
    }
    case ParameterSpec::DISCRETE: {
      const auto& v = f.discrete_values;
      auto it = std::lower_bound(v.begin(), v.end(), native);
      size_t k = std::min<size_t>(it - v.begin(), v.size() - 1);
      if (k > 0 && native - v[k - 1] < v[k] - native) --k;
      return m.discrete_unit[k];
    }
    default:  // DOUBLE, INTEGER.
      if (!(m.lo < m.hi)) return 0.5;
      return ScaledToUnit(native, m.lo, m.hi, f.scale);
  }
}

double SearchSpace::FromUnit(int i, double unit) const {
  const FlatParameter& f = params_[i];
  const Mapping& m = mappings_[i];
  const double u = unit > 0.0 ? std::min(unit, 1.0) : 0.0;  // NaN -> 0.
  switch (f.type) {
    case ParameterSpec::CATEGORICAL: {
      const double n = static_cast<double>(f.categories.size());
      return std::min(std::floor(u * n), n - 1);
    }
    case ParameterSpec::DISCRETE: {
      const auto& pos = m.discrete_unit;
      auto it = std::lower_bound(pos.begin(), pos.end(), u);
      size_t k = std::min<size_t>(it - pos.begin(), pos.size() - 1);
      if (k > 0 && u - pos[k - 1] <= pos[k] - u) --k;
      return f.discrete_values[k];
    }
    case ParameterSpec::INTEGER:
      return std::clamp(std::round(UnitToScaled(u, m.lo, m.hi, f.scale)),
                        f.min_value, f.max_value);
    default:  // DOUBLE.
      if (!(m.lo < m.hi)) return m.lo;
      return UnitToScaled(u, m.lo, m.hi, f.scale);
  }
}

bool SearchSpace::IsActive(int i, const Assignment& a) const {
  const FlatParameter& f = params_[i];
  if (f.parent < 0) return true;
  if (!a.active[f.parent]) return false;
  const double v = a.values[f.parent];
  return std::find(f.parent_values.begin(), f.parent_values.end(), v) !=
         f.parent_values.end();
}

Assignment SearchSpace::AssignmentFromUnit(
    const std::vector<double>& unit) const {
  Assignment a;
  a.values.resize(size());
  a.active.resize(size());
  for (int i = 0; i < size(); ++i) {  // Pre-order: parents come first.
    a.values[i] = FromUnit(i, unit[i]);
    a.active[i] = IsActive(i, a);
  }
  return a;
}

std::vector<cairn::v1::Parameter> SearchSpace::ToParameters(
    const Assignment& a) const {
  std::vector<cairn::v1::Parameter> out;
  for (int i = 0; i < size(); ++i) {
    if (!a.active[i]) continue;
    const FlatParameter& f = params_[i];
    cairn::v1::Parameter& p = out.emplace_back();
    p.set_parameter_id(f.id);
    if (f.type == ParameterSpec::CATEGORICAL) {
      p.mutable_value()->set_string_value(
          f.categories[static_cast<size_t>(a.values[i])]);
    } else {
      p.mutable_value()->set_number_value(a.values[i]);
    }
  }
  return out;
}

Suggestion SearchSpace::SuggestionFromUnit(
    const std::vector<double>& unit) const {
  Suggestion s;
  s.parameters = ToParameters(AssignmentFromUnit(unit));
  return s;
}

namespace {

// Position in `params` of each flat parameter (-1 where not given), or why
// `params` names an empty, unknown or duplicate parameter.
template <typename Container>
absl::StatusOr<std::vector<int>> GivenPositions(const SearchSpace& space,
                                                const Container& params) {
  std::vector<int> given(space.size(), -1);  // Flat index -> position.
  int k = 0;
  for (const cairn::v1::Parameter& p : params) {
    const std::string& id = p.parameter_id();
    if (id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameters[", k, "]: parameter_id is empty"));
    }
    const int i = space.IndexOf(id);
    if (i < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameters[", k, "] (", util::ShortenForError(id, 64),
                       "): unknown parameter ", Quote(id),
                       " (not in the study's search space)"));
    }
    if (given[i] >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameters[", k, "] (", util::ShortenForError(id, 64),
                       "): duplicate parameter ", Quote(id),
                       " (also at parameters[", given[i], "])"));
    }
    given[i] = k++;
  }
  return given;
}

// The error for flat parameter i, given at parameters[position] although it
// is inactive under the parents parsed so far in `a`.
absl::Status InactiveParameterError(const SearchSpace& space, int i,
                                    int position, const Assignment& a) {
  const FlatParameter& f = space.parameter(i);
  const FlatParameter& parent = space.parameter(f.parent);
  std::string why = absl::StrCat("its parent ", parent.id, " is inactive");
  if (a.active[f.parent]) {
    const double pv = a.values[f.parent];
    why = absl::StrCat("its parent ", parent.id, " is ",
                       parent.type == ParameterSpec::CATEGORICAL
                           ? Quote(parent.categories[static_cast<size_t>(pv)])
                           : RoundTripNumber(pv));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("parameters[", position, "] (", f.id, "): parameter ",
                   Quote(f.id), " is not active: ", why));
}

// The index of a CATEGORICAL parameter's value in its categories; `where`
// names the parameter in errors.
absl::StatusOr<double> ParseCategoricalValue(const FlatParameter& f,
                                             const google::protobuf::Value& v,
                                             const std::string& where) {
  if (v.kind_case() != google::protobuf::Value::kStringValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value ", DescribeValue(v),
                     " must be a string (string_value) for CATEGORICAL"));
  }
  auto it =
      std::find(f.categories.begin(), f.categories.end(), v.string_value());
  if (it == f.categories.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value ", Quote(v.string_value()),
                     " is not one of categorical_values"));
  }
  return static_cast<double>(it - f.categories.begin());
}

// The value of a numeric (DOUBLE, INTEGER, DISCRETE) parameter, checked
// against its type and range; -0.0 becomes 0.0.
absl::StatusOr<double> ParseNumericValue(const FlatParameter& f,
                                         const google::protobuf::Value& v,
                                         const std::string& where) {
  if (v.kind_case() != google::protobuf::Value::kNumberValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value ", DescribeValue(v),
                     " must be a number (number_value) for ",
                     ParameterSpec::Type_Name(f.type)));
  }
  const double x = v.number_value();
  if (!std::isfinite(x)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value ", RoundTripNumber(x), " is not finite"));
  }
  if (f.type == ParameterSpec::DISCRETE) {
    if (!std::binary_search(f.discrete_values.begin(), f.discrete_values.end(),
                            x)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value ", RoundTripNumber(x),
                       " is not one of discrete_values"));
    }
  } else {
    if (f.type == ParameterSpec::INTEGER && x != std::floor(x)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value ", RoundTripNumber(x),
                       " is not an integer (INTEGER)"));
    }
    if (x < f.min_value || x > f.max_value) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value ", RoundTripNumber(x), " is outside [",
                       RoundTripNumber(f.min_value), ", ",
                       RoundTripNumber(f.max_value), "]"));
    }
  }
  return x == 0 ? 0.0 : x;
}

}  // namespace

template <typename Container>
absl::StatusOr<Assignment> SearchSpace::ParseImpl(
    const Container& params) const {
  const int n = size();
  absl::StatusOr<std::vector<int>> given = GivenPositions(*this, params);
  if (!given.ok()) return given.status();

  Assignment a;
  a.values.assign(n, 0.0);
  a.active.assign(n, false);
  for (int i = 0; i < n; ++i) {
    const FlatParameter& f = params_[i];
    const int position = (*given)[i];
    a.active[i] = IsActive(i, a);
    if (!a.active[i]) {
      if (position < 0) continue;
      return InactiveParameterError(*this, i, position, a);
    }
    if (position < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameters: missing active parameter ", Quote(f.id),
          f.parent >= 0 ? absl::StrCat(" (child of ", params_[f.parent].id, ")")
                        : ""));
    }
    const cairn::v1::Parameter& p = *std::next(params.begin(), position);
    const std::string where =
        absl::StrCat("parameters[", position, "] (", f.id, ")");
    absl::StatusOr<double> value =
        f.type == ParameterSpec::CATEGORICAL
            ? ParseCategoricalValue(f, p.value(), where)
            : ParseNumericValue(f, p.value(), where);
    if (!value.ok()) return value.status();
    a.values[i] = *value;
  }
  return a;
}

absl::StatusOr<Assignment> SearchSpace::ParseParameters(
    const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params)
    const {
  return ParseImpl(params);
}

absl::StatusOr<Assignment> SearchSpace::ParseParameters(
    const std::vector<cairn::v1::Parameter>& params) const {
  return ParseImpl(params);
}

UnitPoint SearchSpace::ToUnitPoint(const Assignment& a) const {
  UnitPoint p;
  p.unit.assign(size(), 0.5);
  p.active = a.active;
  for (int i = 0; i < size(); ++i) {
    if (a.active[i]) p.unit[i] = ToUnit(i, a.values[i]);
  }
  return p;
}

absl::StatusOr<UnitPoint> SearchSpace::TrialToUnitPoint(
    const cairn::v1::Trial& trial) const {
  absl::StatusOr<Assignment> a = ParseParameters(trial.parameters());
  if (!a.ok()) return a.status();
  return ToUnitPoint(*a);
}

std::string SearchSpace::Key(const Assignment& a) const {
  return CanonicalKey(ToParameters(a));
}

std::string SearchSpace::CanonicalKey(
    const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params) {
  return CanonicalKeyImpl(params);
}

std::string SearchSpace::CanonicalKey(
    const std::vector<cairn::v1::Parameter>& params) {
  return CanonicalKeyImpl(params);
}

}  // namespace cairn::tuner
