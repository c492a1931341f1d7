// AlgorithmSpecification.MetricDefinitions: regexes applied to every line a
// training container prints; the first capture group of a match is the
// metric's value, as SageMaker reads its logs. RE2 (linear time), so a
// hostile regex cannot stall the reader.
#ifndef CAIRN_SAGEMAKER_METRIC_DEFINITIONS_H_
#define CAIRN_SAGEMAKER_METRIC_DEFINITIONS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"
#include "re2/re2.h"

namespace cairn::sagemaker {

// `regex` compiled; InvalidArgument naming MetricDefinitions.Regex and the
// value if it does not compile or has no capture group.
absl::StatusOr<std::unique_ptr<RE2>> CompileMetricRegex(
    absl::string_view regex);

// Thread-safe (immutable after Create).
class MetricMatcher {
 public:
  static absl::StatusOr<MetricMatcher> Create(
      const google::protobuf::RepeatedPtrField<
          cairn::v1::SageMakerMetricDefinition>& definitions);

  // (name, value) of each definition whose regex matches somewhere in
  // `line` with a first group that reads as a finite number, in
  // definition order.
  std::vector<std::pair<std::string, double>> Match(
      absl::string_view line) const;

 private:
  std::vector<std::pair<std::string, std::shared_ptr<const RE2>>> metrics_;
};

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_METRIC_DEFINITIONS_H_
