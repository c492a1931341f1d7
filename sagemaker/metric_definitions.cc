// See metric_definitions.h.
#include "sagemaker/metric_definitions.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {

absl::StatusOr<std::unique_ptr<RE2>> CompileMetricRegex(
    absl::string_view regex) {
  auto re = std::make_unique<RE2>(std::string(regex), RE2::Quiet);
  if (!re->ok()) {
    return InvalidField("MetricDefinitions.Regex", regex,
                        absl::StrCat("does not compile: ", re->error()));
  }
  if (re->NumberOfCapturingGroups() < 1) {
    return InvalidField("MetricDefinitions.Regex", regex,
                        "needs a capture group (the value)");
  }
  return re;
}

absl::StatusOr<MetricMatcher> MetricMatcher::Create(
    const google::protobuf::RepeatedPtrField<
        cairn::v1::SageMakerMetricDefinition>& definitions) {
  MetricMatcher matcher;
  for (const auto& def : definitions) {
    absl::StatusOr<std::unique_ptr<RE2>> re = CompileMetricRegex(def.regex());
    if (!re.ok()) return re.status();
    matcher.metrics_.emplace_back(def.name(), std::move(*re));
  }
  return matcher;
}

std::vector<std::pair<std::string, double>> MetricMatcher::Match(
    absl::string_view line) const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, re] : metrics_) {
    re2::StringPiece group;
    double value = 0;
    if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re,
                          &group) &&
        absl::SimpleAtod(absl::StripAsciiWhitespace(
                             absl::string_view(group.data(), group.size())),
                         &value) &&
        std::isfinite(value)) {
      out.emplace_back(name, value);
    }
  }
  return out;
}

}  // namespace cairn::sagemaker
