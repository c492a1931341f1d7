// See parameter_values.h.
#include "api/formats/parameter_values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace cairn::api::formats {
namespace {

using json = nlohmann::ordered_json;

bool IsWhole(double v) {
  return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15;
}

void AddKinds(const cairn::v1::ParameterSpec& p, ParameterKinds* kinds) {
  NumberKind kind = NumberKind::kDouble;
  if (p.type() == cairn::v1::ParameterSpec::INTEGER) {
    kind = NumberKind::kInteger;
  } else if (p.type() == cairn::v1::ParameterSpec::DISCRETE &&
             p.discrete_values_size() > 0 &&
             std::all_of(p.discrete_values().begin(), p.discrete_values().end(),
                         IsWhole)) {
    kind = NumberKind::kInteger;
  }
  (*kinds)[p.parameter_id()] = kind;
  for (const auto& child : p.conditional_parameter_specs()) {
    AddKinds(child.parameter_spec(), kinds);
  }
}

}  // namespace

ParameterKinds ParameterKindsOf(const cairn::v1::StudySpec& spec) {
  ParameterKinds kinds;
  for (const auto& p : spec.parameters()) AddKinds(p, &kinds);
  return kinds;
}

nlohmann::ordered_json ParameterValueToJson(
    const cairn::v1::Parameter& parameter, const ParameterKinds& kinds) {
  const google::protobuf::Value& v = parameter.value();
  switch (v.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return json(v.string_value());
    case google::protobuf::Value::kNumberValue: {
      const double d = v.number_value();
      auto it = kinds.find(parameter.parameter_id());
      if (it != kinds.end() && it->second == NumberKind::kInteger &&
          IsWhole(d)) {
        return json(static_cast<int64_t>(d));
      }
      return json(d);
    }
    case google::protobuf::Value::kBoolValue:
      return json(v.bool_value());
    default:
      return json(nullptr);
  }
}

}  // namespace cairn::api::formats
