// name=value, STUDY and TRIAL argument parsing.
#include "cli/args.h"

#include <charconv>
#include <cmath>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/resource_names.h"

namespace cairn::cli {

bool IsDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

absl::StatusOr<cairn::v1::Metric> ParseMetricAssignment(
    absl::string_view token) {
  const size_t eq = token.find('=');
  if (eq == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad metric \"", token, "\": expected name=value (e.g. loss=0.25)"));
  }
  const absl::string_view name = token.substr(0, eq);
  absl::string_view value = token.substr(eq + 1);
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad metric \"", token, "\": empty metric name"));
  }
  if (value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad metric \"", token, "\": empty value"));
  }
  // from_chars rejects a leading '+', which users may write.
  absl::string_view digits = value;
  if (digits[0] == '+') digits.remove_prefix(1);
  double d = 0;
  const char* end = digits.data() + digits.size();
  auto [p, ec] = std::from_chars(digits.data(), end, d);
  if (ec != std::errc() || p != end || digits.empty() ||
      (digits[0] == '-' && value[0] == '+')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad metric \"", token, "\": value \"", value, "\" is not a number"));
  }
  if (!std::isfinite(d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad metric \"", token, "\": value must be finite, got \"",
                     value, "\""));
  }
  cairn::v1::Metric metric;
  metric.set_metric_id(std::string(name));
  metric.set_value(d);
  return metric;
}

absl::StatusOr<std::vector<cairn::v1::Metric>> ParseMetricAssignments(
    const std::vector<std::string>& tokens) {
  std::vector<cairn::v1::Metric> out;
  std::set<std::string> seen;
  for (const std::string& token : tokens) {
    auto metric = ParseMetricAssignment(token);
    if (!metric.ok()) return metric.status();
    if (!seen.insert(metric->metric_id()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad metric \"", token, "\": metric \"",
                       metric->metric_id(), "\" given twice"));
    }
    out.push_back(*std::move(metric));
  }
  return out;
}

absl::StatusOr<StudyRef> ParseStudyRef(absl::string_view arg) {
  StudyRef ref;
  if (arg.empty()) {
    return absl::InvalidArgumentError("empty STUDY argument");
  }
  if (IsDigits(arg)) {
    ref.name = absl::StrCat("studies/", arg);
    return ref;
  }
  if (absl::StartsWith(arg, "studies/")) {
    if (!api::ParseStudyName(arg, "STUDY").ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad study name \"", arg, "\": expected studies/N"));
    }
    ref.name = std::string(arg);
    return ref;
  }
  ref.display_name = std::string(arg);
  return ref;
}

absl::StatusOr<std::string> TrialName(absl::string_view study_name,
                                      absl::string_view arg) {
  if (IsDigits(arg)) return absl::StrCat(study_name, "/trials/", arg);
  if (absl::StartsWith(arg, "studies/")) {
    if (!api::ParseTrialName(arg, "TRIAL").ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad trial name \"", arg, "\": expected M or studies/N/trials/M"));
    }
    if (!absl::StartsWith(arg, absl::StrCat(study_name, "/trials/"))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trial \"", arg, "\" does not belong to study ", study_name));
    }
    return std::string(arg);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "bad trial \"", arg, "\": expected a trial id M or studies/N/trials/M"));
}

absl::Status CheckServerAddress(absl::string_view server) {
  const size_t colon = server.rfind(':');
  const absl::string_view host =
      colon == absl::string_view::npos ? server : server.substr(0, colon);
  const absl::string_view port =
      colon == absl::string_view::npos ? "" : server.substr(colon + 1);
  int port_number = 0;
  const bool scheme =
      absl::StartsWith(server, "unix:") || absl::StartsWith(server, "dns:") ||
      absl::StartsWith(server, "ipv4:") || absl::StartsWith(server, "ipv6:");
  if (scheme || (!host.empty() && IsDigits(port) &&
                 absl::SimpleAtoi(port, &port_number) && port_number > 0 &&
                 port_number <= 65535 && host.back() != ':')) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--server (or $CAIRN_SERVER) '", server.substr(0, 64),
      "' is not HOST:PORT (e.g. 127.0.0.1:50051 or localhost:50051)"));
}

}  // namespace cairn::cli
