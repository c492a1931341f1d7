// How parameter values are written by every client of the API (the CLI's
// tables, JSON and CSV; cairnd's CSV export): one home, so an INTEGER
// parameter reads "64" everywhere and a DOUBLE one keeps its fraction.
#ifndef CAIRN_API_FORMATS_PARAMETER_VALUES_H_
#define CAIRN_API_FORMATS_PARAMETER_VALUES_H_

#include <map>
#include <string>

#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::api::formats {

// How a numeric parameter value is written: INTEGER parameters, and DISCRETE
// parameters whose values are all whole numbers, as JSON integers; everything
// else as JSON doubles.
enum class NumberKind { kDouble, kInteger };

// parameter_id -> NumberKind for every parameter of the spec, conditional
// children included. Parameters absent from the map are written as doubles.
using ParameterKinds = std::map<std::string, NumberKind>;
ParameterKinds ParameterKindsOf(const cairn::v1::StudySpec& spec);

// One parameter value as JSON: strings for CATEGORICAL values, numbers as
// described by `kinds`.
nlohmann::ordered_json ParameterValueToJson(
    const cairn::v1::Parameter& parameter, const ParameterKinds& kinds);

}  // namespace cairn::api::formats

#endif  // CAIRN_API_FORMATS_PARAMETER_VALUES_H_
