// The flattened search space of a study, shared by every designer: parameter
// metadata, the mapping of values to and from the unit interval per scale
// type, conditional activity, and canonical keys for duplicate detection.
//
// Representations used below:
// - "native" value of a parameter: the number itself for DOUBLE, INTEGER and
//   DISCRETE; the index into categorical_values for CATEGORICAL.
// - Assignment: one native value and one active flag per flattened parameter.
// - UnitPoint: one unit coordinate in [0, 1] and one active flag per flattened
//   parameter. Designers search the unit cube [0, 1]^size(); coordinates of
//   inactive parameters are ignored when decoding and are 0.5 when encoding.
//
// Unit mapping per type (lo/hi are mapped through the scale first):
// - DOUBLE: [min_value, max_value] -> [0, 1] in the scaled space
//   (linear, log, or reverse log: dense near max_value).
// - INTEGER: [min_value - 0.5, max_value + 0.5] -> [0, 1] in the scaled space,
//   rounded to the nearest integer when decoding, so under a linear scale
//   every integer owns an equal share of [0, 1].
// - DISCRETE: each value sits at its scaled position between the first and
//   the last value; decoding picks the value nearest in the scaled space.
//   With UNIT_LOG_SCALE, {1e-4, 1e-3, 1e-2, 1e-1} get equal shares.
// - CATEGORICAL: [0, 1] is split into n equal cells; value k encodes to the
//   cell center (k + 0.5) / n.
// A single-valued range encodes to 0.5. FromUnit(ToUnit(x)) == x for every
// valid native value x (exactly for INTEGER, DISCRETE and CATEGORICAL; up to
// floating-point rounding for DOUBLE).
//
// A SearchSpace is immutable after Create and safe for concurrent use.
#ifndef CAIRN_TUNER_SEARCH_SPACE_H_
#define CAIRN_TUNER_SEARCH_SPACE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "tuner/designer.h"

namespace cairn::tuner {

// One parameter of the flattened tree. Parameters are numbered in depth-first
// pre-order of the spec (a parent always precedes its children; siblings keep
// spec order).
struct FlatParameter {
  std::string id;
  cairn::v1::ParameterSpec::Type type = cairn::v1::ParameterSpec::DOUBLE;
  // UNIT_LINEAR_SCALE, UNIT_LOG_SCALE or UNIT_REVERSE_LOG_SCALE; an
  // unspecified scale is reported as UNIT_LINEAR_SCALE. CATEGORICAL
  // parameters report SCALE_TYPE_UNSPECIFIED.
  cairn::v1::ParameterSpec::ScaleType scale =
      cairn::v1::ParameterSpec::UNIT_LINEAR_SCALE;
  // DOUBLE/INTEGER: the bounds; DISCRETE: first and last value; CATEGORICAL:
  // 0 and the number of categories - 1 (native indices).
  double min_value = 0.0;
  double max_value = 0.0;
  std::vector<std::string> categories;  // CATEGORICAL only.
  std::vector<double> discrete_values;  // DISCRETE only, increasing.
  int grid_resolution = 0;              // As in the spec; 0 = default.
  // Flat index of the parent, or -1 for a top-level parameter.
  int parent = -1;
  // Native parent values that activate this parameter (category indices for
  // a CATEGORICAL parent); empty for a top-level parameter.
  std::vector<double> parent_values;
  // Flat indices of the conditional children, in spec order.
  std::vector<int> children;
  // 0 for top-level parameters.
  int depth = 0;

  // Number of distinct values, or 0 for DOUBLE (a continuum). INTEGER
  // ranges count max - min + 1.
  double NumValues() const;
};

// Native values plus activity, one entry per flattened parameter.
struct Assignment {
  std::vector<double> values;
  std::vector<bool> active;
};

// Unit-cube coordinates plus activity, one entry per flattened parameter.
struct UnitPoint {
  std::vector<double> unit;
  std::vector<bool> active;
};

class SearchSpace {
 public:
  // Builds the flattened space. Returns InvalidArgument (as
  // ValidateSearchSpace) if spec.parameters is not a valid search space;
  // the rest of the spec is not looked at.
  static absl::StatusOr<SearchSpace> Create(const cairn::v1::StudySpec& spec);

  // Number of flattened parameters (the unit cube's dimension).
  int size() const { return static_cast<int>(params_.size()); }
  const FlatParameter& parameter(int i) const { return params_[i]; }
  const std::vector<FlatParameter>& parameters() const { return params_; }
  // Flat index of `id`, or -1 if the space has no such parameter.
  int IndexOf(std::string_view id) const;
  // True if some parameter has a parent.
  bool is_conditional() const { return conditional_; }

  // Maps native value `native` of parameter i to [0, 1] and back (see the
  // file comment). ToUnit clamps out-of-range values to the bounds; FromUnit
  // clamps `unit` to [0, 1] and always returns a valid native value (integral
  // for INTEGER, a member for DISCRETE, an index for CATEGORICAL).
  double ToUnit(int i, double native) const;
  double FromUnit(int i, double unit) const;

  // True if parameter i is active: top-level parameters always are; a child
  // is active when its parent is active in `a` and the parent's native value
  // is one of the child's parent_values. Only a.values/a.active of the
  // ancestors of i are read.
  bool IsActive(int i, const Assignment& a) const;

  // Decodes a unit point (unit.size() == size(), REQUIRES) top-down: every
  // parameter gets FromUnit of its coordinate, and activity follows the
  // decoded parent values. Values of inactive parameters are still filled.
  Assignment AssignmentFromUnit(const std::vector<double>& unit) const;

  // The active parameters of `a` in the API representation (flat order;
  // integral number_value for INTEGER, string_value for CATEGORICAL).
  std::vector<cairn::v1::Parameter> ToParameters(const Assignment& a) const;

  // AssignmentFromUnit + ToParameters, wrapped in a Suggestion (no metadata).
  Suggestion SuggestionFromUnit(const std::vector<double>& unit) const;

  // Parses and validates API parameters (e.g. a trial's): the checks of
  // ValidateTrialParameters. Values of inactive parameters are 0.
  absl::StatusOr<Assignment> ParseParameters(
      const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params)
      const;
  absl::StatusOr<Assignment> ParseParameters(
      const std::vector<cairn::v1::Parameter>& params) const;

  // Encodes an assignment: unit[i] = ToUnit(i, a.values[i]) for active
  // parameters, 0.5 for inactive ones; active copied.
  UnitPoint ToUnitPoint(const Assignment& a) const;

  // ParseParameters(trial.parameters()) + ToUnitPoint: what a model-based
  // designer (GP) trains on. Fails like ParseParameters for a trial whose
  // parameters do not fit this space.
  absl::StatusOr<UnitPoint> TrialToUnitPoint(
      const cairn::v1::Trial& trial) const;

  // Canonical key of an assignment: equal keys <=> equal active parameters
  // and values. Key(a) == CanonicalKey(ToParameters(a)).
  std::string Key(const Assignment& a) const;

  // Canonical key of any parameter list, independent of order: entries sorted
  // by parameter_id, numbers written exactly (%.17g, -0 as 0), strings
  // escaped and length-prefixed. Works on lists that do not fit any space.
  static std::string CanonicalKey(
      const google::protobuf::RepeatedPtrField<cairn::v1::Parameter>& params);
  static std::string CanonicalKey(
      const std::vector<cairn::v1::Parameter>& params);

 private:
  // Precomputed mapping data, one per parameter.
  struct Mapping {
    double lo = 0.0;  // Scaled-space range (INTEGER extended by 0.5).
    double hi = 0.0;
    std::vector<double> discrete_unit;  // Unit positions of DISCRETE values.
  };

  SearchSpace() = default;
  void Flatten(const cairn::v1::ParameterSpec& p, int parent,
               std::vector<double> parent_values, int depth);
  template <typename Container>
  absl::StatusOr<Assignment> ParseImpl(const Container& params) const;

  std::vector<FlatParameter> params_;
  std::vector<Mapping> mappings_;
  absl::flat_hash_map<std::string, int> index_;
  bool conditional_ = false;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_SEARCH_SPACE_H_
