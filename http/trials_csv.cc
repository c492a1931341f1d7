#include "http/trials_csv.h"

#include <charconv>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/time_util.h"

namespace cairn::http {
namespace {

using google::protobuf::util::TimeUtil;

// A field quoted when it holds a comma, quote or line break.
std::string Field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// The shortest text that reads back as exactly `value`.
std::string Number(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string ValueText(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNumberValue:
      return Number(value.number_value());
    case google::protobuf::Value::kStringValue:
      return value.string_value();
    case google::protobuf::Value::kBoolValue:
      return value.bool_value() ? "true" : "false";
    default:
      return "";
  }
}

std::string TimeText(const cairn::v1::Trial& trial, bool end) {
  if (end ? !trial.has_end_time() : !trial.has_start_time()) return "";
  return TimeUtil::ToString(end ? trial.end_time() : trial.start_time());
}

}  // namespace

std::string TrialsCsv(const std::vector<cairn::v1::Trial>& trials) {
  std::set<std::string> params;
  std::set<std::string> metrics;
  for (const auto& t : trials) {
    for (const auto& p : t.parameters()) params.insert(p.parameter_id());
    for (const auto& m : t.final_measurement().metrics()) {
      metrics.insert(m.metric_id());
    }
  }
  std::vector<std::string> header = {"name", "id", "state", "start_time",
                                     "end_time"};
  for (const auto& p : params) header.push_back(Field("param:" + p));
  for (const auto& m : metrics) header.push_back(Field("metric:" + m));
  std::string out = absl::StrCat(absl::StrJoin(header, ","), "\r\n");
  for (const auto& t : trials) {
    std::map<std::string, std::string> values;
    for (const auto& p : t.parameters()) {
      values["p" + p.parameter_id()] = ValueText(p.value());
    }
    for (const auto& m : t.final_measurement().metrics()) {
      values["m" + m.metric_id()] = Number(m.value());
    }
    std::vector<std::string> row = {Field(t.name()), absl::StrCat(t.id()),
                                    cairn::v1::Trial::State_Name(t.state()),
                                    TimeText(t, false), TimeText(t, true)};
    for (const auto& p : params) row.push_back(Field(values["p" + p]));
    for (const auto& m : metrics) row.push_back(Field(values["m" + m]));
    absl::StrAppend(&out, absl::StrJoin(row, ","), "\r\n");
  }
  return out;
}

}  // namespace cairn::http
