// See trials_csv.h.
#include "api/formats/trials_csv.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/formats/parameter_values.h"

namespace cairn::api::formats {
namespace {

// Appends `id` to `columns` unless present.
void AddColumn(const std::string& id, std::vector<std::string>* columns) {
  if (std::find(columns->begin(), columns->end(), id) == columns->end()) {
    columns->push_back(id);
  }
}

void AddParameterColumns(const cairn::v1::ParameterSpec& p,
                         std::vector<std::string>* columns) {
  AddColumn(p.parameter_id(), columns);
  for (const auto& child : p.conditional_parameter_specs()) {
    AddParameterColumns(child.parameter_spec(), columns);
  }
}

// A parameter value as text: strings as is, numbers exactly.
std::string ValueText(const cairn::v1::Parameter& p,
                      const ParameterKinds& kinds) {
  const nlohmann::ordered_json v = ParameterValueToJson(p, kinds);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::vector<std::string> Row(const cairn::v1::Trial& t,
                             const std::vector<std::string>& params,
                             const std::vector<std::string>& metrics,
                             const ParameterKinds& kinds) {
  std::map<std::string, std::string> values;
  for (const auto& p : t.parameters()) {
    values["p:" + p.parameter_id()] = ValueText(p, kinds);
  }
  for (const auto& m : t.final_measurement().metrics()) {
    values["m:" + m.metric_id()] = nlohmann::json(m.value()).dump();
  }
  std::vector<std::string> row = {absl::StrCat(t.id()),
                                  cairn::v1::Trial::State_Name(t.state())};
  for (const auto& id : params) row.push_back(values["p:" + id]);
  for (const auto& id : metrics) row.push_back(values["m:" + id]);
  row.push_back(t.infeasible_reason());
  return row;
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::vector<std::string> quoted;
  quoted.reserve(fields.size());
  for (const auto& f : fields) quoted.push_back(CsvField(f));
  return absl::StrCat(absl::StrJoin(quoted, ","), "\r\n");
}

}  // namespace

std::string CsvField(const std::string& value) {
  const bool needs_quotes =
      value.find_first_of(",\"\r\n") != std::string::npos ||
      (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!needs_quotes) return value;
  return absl::StrCat("\"", absl::StrReplaceAll(value, {{"\"", "\"\""}}), "\"");
}

std::string TrialsCsv(const std::vector<cairn::v1::Trial>& trials,
                      const cairn::v1::StudySpec& spec) {
  std::vector<std::string> params;
  for (const auto& p : spec.parameters()) AddParameterColumns(p, &params);
  std::vector<std::string> metrics;
  for (const auto& m : spec.metrics()) AddColumn(m.metric_id(), &metrics);
  for (const auto& t : trials) {
    for (const auto& p : t.parameters()) AddColumn(p.parameter_id(), &params);
    for (const auto& m : t.final_measurement().metrics()) {
      AddColumn(m.metric_id(), &metrics);
    }
  }
  std::vector<std::string> header = {"id", "state"};
  header.insert(header.end(), params.begin(), params.end());
  header.insert(header.end(), metrics.begin(), metrics.end());
  header.push_back("infeasible_reason");
  std::string out = CsvLine(header);
  const ParameterKinds kinds = ParameterKindsOf(spec);
  for (const auto& t : trials) {
    absl::StrAppend(&out, CsvLine(Row(t, params, metrics, kinds)));
  }
  return out;
}

}  // namespace cairn::api::formats
