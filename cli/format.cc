// JSON and table output of the cairn CLI.
#include "cli/format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/formats/json_mapping.h"
#include "api/resource_names.h"
#include "api/trial_states.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "util/number_text.h"

namespace cairn::cli {
namespace {

using json = nlohmann::ordered_json;

bool IsSet(const google::protobuf::Timestamp& t) {
  return t.seconds() != 0 || t.nanos() != 0;
}

std::string StateName(cairn::v1::Trial::State s) {
  return cairn::v1::Trial::State_Name(s);
}

// A hyperparameter as the Job resource holds it ("0.012345678901234568",
// "64", "adam") with 6 significant digits when it has a fraction or an
// exponent; integers and names unchanged.
std::string HyperparameterText(const std::string& value) {
  double number = 0;
  const bool fractional =
      value.find_first_of(".eE") != std::string::npos &&
      value.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (!fractional || !absl::SimpleAtod(value, &number)) return value;
  return util::SixDigitNumber(number);
}

int64_t JobTrialId(const cairn::v1::HyperparameterOutput& t) {
  int64_t id = 0;
  return absl::SimpleAtoi(t.trial_id(), &id) ? id : 0;
}

bool HasObjective(const cairn::v1::HyperparameterOutput& t) {
  return t.has_final_metric() &&
         !std::isnan(t.final_metric().objective_value());
}

bool IsEndedJob(cairn::v1::TrialJob::State s) {
  return s == cairn::v1::TrialJob::SUCCEEDED ||
         s == cairn::v1::TrialJob::FAILED ||
         s == cairn::v1::TrialJob::CANCELLED;
}

}  // namespace

int64_t TrialIdOf(const cairn::v1::Trial& trial) {
  if (trial.id() != 0) return trial.id();
  absl::StatusOr<api::TrialName> name =
      api::ParseTrialName(trial.name(), "trial.name");
  return name.ok() ? name->trial_id : 0;
}

namespace {

// `message` printed by `print` (api/formats/json_mapping.h), indented
// with two spaces unless !pretty, keeping the field order.
absl::StatusOr<std::string> PrintJson(
    const google::protobuf::Message& message, bool pretty,
    absl::Status (*print)(const google::protobuf::Message&, std::string*)) {
  std::string out;
  const absl::Status status = print(message, &out);
  if (!status.ok()) {
    // Only for values the JSON mapping cannot hold (a Timestamp out of range).
    return absl::InternalError(
        absl::StrCat("cannot print the answer as JSON: ", status.message()));
  }
  if (!pretty) return out;
  return json::parse(out).dump(2);
}

}  // namespace

absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message, bool pretty) {
  return PrintJson(message, pretty, &api::formats::AppendApiJson);
}

absl::Status WriteJson(const google::protobuf::Message& message,
                       std::ostream& out) {
  absl::StatusOr<std::string> text = ProtoToJson(message);
  if (!text.ok()) return text.status();
  out << *text << "\n";
  return absl::OkStatus();
}

absl::StatusOr<std::string> AiPlatformJson(
    const google::protobuf::Message& message) {
  return PrintJson(message, /*pretty=*/true,
                   &api::formats::AppendAiPlatformJson);
}

std::string ParametersToText(const cairn::v1::Trial& trial,
                             const api::formats::ParameterKinds& kinds) {
  std::vector<std::string> parts;
  for (const auto& p : trial.parameters()) {
    const json v = api::formats::ParameterValueToJson(p, kinds);
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_number_integer()) {
      text = v.dump();
    } else if (v.is_number()) {
      text = util::SixDigitNumber(v.get<double>());
    } else {
      text = v.dump();
    }
    parts.push_back(absl::StrCat(p.parameter_id(), "=", text));
  }
  return absl::StrJoin(parts, " ");
}

std::string MetricsToText(const cairn::v1::Measurement& measurement) {
  std::vector<std::string> parts;
  for (const auto& m : measurement.metrics()) {
    parts.push_back(
        absl::StrCat(m.metric_id(), "=", util::SixDigitNumber(m.value())));
  }
  return absl::StrJoin(parts, " ");
}

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      line += cell;
      if (i + 1 < header.size())
        line += std::string(width[i] - cell.size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(header);
  for (const auto& row : rows) emit(row);
  return out;
}

std::string StudiesTable(const std::vector<cairn::v1::Study>& studies) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : studies) {
    const int finished = s.trial_count() - s.pending_count();
    const int total =
        s.spec().max_trials() > 0 ? s.spec().max_trials() : s.trial_count();
    rows.push_back(
        {s.name(), s.display_name(), cairn::v1::Study::State_Name(s.state()),
         absl::StrCat(finished, "/", total), absl::StrCat(s.pending_count()),
         absl::StrCat(s.failed_count()), absl::StrCat(s.infeasible_count())});
  }
  return FormatTable({"NAME", "DISPLAY NAME", "STATE", "TRIALS", "PENDING",
                      "FAILED", "INFEASIBLE"},
                     rows);
}

std::string TrialsTable(const std::vector<cairn::v1::Trial>& trials,
                        const api::formats::ParameterKinds& kinds) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : trials) {
    const bool has_final = t.has_final_measurement();
    rows.push_back(
        {absl::StrCat(TrialIdOf(t)), StateName(t.state()),
         has_final ? absl::StrCat(t.final_measurement().step_count()) : "",
         has_final ? MetricsToText(t.final_measurement()) : "",
         ParametersToText(t, kinds)});
  }
  return FormatTable({"ID", "STATE", "STEP", "METRICS", "PARAMETERS"}, rows);
}

std::string JobTrialsTable(
    const cairn::v1::Job& job,
    const std::map<std::string, std::string>& early_stopping_reasons) {
  const bool minimize = job.training_input().hyperparameters().goal() ==
                        cairn::v1::HyperparameterSpec::MINIMIZE;
  // Whether a's objective is better than b's.
  auto better = [minimize](double a, double b) {
    return minimize ? a < b : a > b;
  };
  std::vector<const cairn::v1::HyperparameterOutput*> trials;
  for (const auto& t : job.training_output().trials()) trials.push_back(&t);
  std::stable_sort(trials.begin(), trials.end(), [&](auto* a, auto* b) {
    if (HasObjective(*a) != HasObjective(*b)) return HasObjective(*a);
    if (HasObjective(*a)) {
      const double va = a->final_metric().objective_value();
      const double vb = b->final_metric().objective_value();
      if (va != vb) return better(va, vb);
    }
    return JobTrialId(*a) < JobTrialId(*b);
  });
  // Sorted best first: the first SUCCEEDED trial with an objective is best.
  const cairn::v1::HyperparameterOutput* best = nullptr;
  for (const auto* t : trials) {
    if (HasObjective(*t) && t->state() == cairn::v1::Job::SUCCEEDED) {
      best = t;
      break;
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto* t : trials) {
    std::vector<std::string> hp;
    for (const auto& [k, v] : t->hyperparameters()) {
      hp.push_back(absl::StrCat(k, "=", HyperparameterText(v)));
    }
    std::sort(hp.begin(), hp.end());
    std::vector<std::string> notes;
    if (t == best) notes.push_back("best");
    if (t->is_trial_stopped_early()) {
      auto reason = early_stopping_reasons.find(t->trial_id());
      notes.push_back(reason == early_stopping_reasons.end()
                          ? "stopped early"
                          : absl::StrCat("stopped early: ", reason->second));
    }
    const bool m = t->has_final_metric();
    rows.push_back(
        {t->trial_id(), cairn::v1::Job::State_Name(t->state()),
         m ? util::SixDigitNumber(t->final_metric().objective_value()) : "-",
         m ? absl::StrCat(t->final_metric().training_step()) : "-",
         absl::StrJoin(hp, " "), absl::StrJoin(notes, "; ")});
  }
  return FormatTable(
      {"TRIAL", "STATE", "OBJECTIVE", "STEP", "HYPERPARAMETERS", "NOTE"}, rows);
}

std::string TrialToText(const cairn::v1::Trial& trial,
                        const api::formats::ParameterKinds& kinds) {
  std::string out;
  auto line = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) absl::StrAppend(&out, key, ": ", value, "\n");
  };
  line("name", trial.name());
  line("id", absl::StrCat(TrialIdOf(trial)));
  line("state", StateName(trial.state()));
  line("parameters", ParametersToText(trial, kinds));
  if (trial.has_final_measurement()) {
    line("metrics", MetricsToText(trial.final_measurement()));
    line("step", absl::StrCat(trial.final_measurement().step_count()));
  }
  if (trial.measurements_size() > 0) {
    line("measurements", absl::StrCat(trial.measurements_size()));
  }
  line("client_id", trial.client_id());
  line("infeasible_reason", trial.infeasible_reason());
  if (trial.stopped_early()) line("stopped_early", "true");
  auto reason = trial.metadata().find(api::kEarlyStoppingReasonKey);
  if (reason != trial.metadata().end()) {
    line("early_stopping_reason", reason->second);
  }
  if (trial.job().attempts() > 0) {
    line("attempts", absl::StrCat(trial.job().attempts()));
  }
  if (IsEndedJob(trial.job().state())) {
    line("exit_code", absl::StrCat(trial.job().last_exit_code()));
  }
  if (IsSet(trial.start_time())) {
    line("start_time",
         google::protobuf::util::TimeUtil::ToString(trial.start_time()));
  }
  if (IsSet(trial.end_time())) {
    line("end_time",
         google::protobuf::util::TimeUtil::ToString(trial.end_time()));
  }
  return out;
}

std::string StatusToLine(const absl::Status& status) {
  std::string message(status.message());
  absl::StrReplaceAll({{"\r\n", " "}, {"\n", " "}, {"\r", " "}}, &message);
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", message);
}

}  // namespace cairn::cli
