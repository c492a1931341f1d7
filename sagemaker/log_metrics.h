// MetricDefinitions applied to a training job's output: a LogMetrics reads
// the lines the container appended to its log since the last poll and
// turns each line that a definition matches into one measurement (a
// hypertune entry the job runner stores like a trainer's own report), so a
// job's curve shows in `cairn trial history` and the web UI.
//
// An entry holds the metrics matched on its line plus the latest value of
// every metric matched before (so the last entry, the trial's final
// measurement, holds the last value of each: FinalMetricDataList). Steps
// count matching lines from 1. Cairn's own attempt header (which quotes
// the command line) is never matched. Only whole lines are matched (a partial
// last line waits for its newline); a line over 64 KiB is skipped.
#ifndef CAIRN_SAGEMAKER_LOG_METRICS_H_
#define CAIRN_SAGEMAKER_LOG_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/sagemaker.pb.h"
#include "jobs/hypertune.h"
#include "sagemaker/metric_definitions.h"

namespace cairn::sagemaker {

// Thread-compatible.
class LogMetrics {
 public:
  // Watches `log_path` from byte `offset` (the log's size when the attempt
  // starts). Error: a definition's regex (MetricMatcher::Create).
  static absl::StatusOr<LogMetrics> Create(
      const cairn::v1::SageMakerAlgorithmSpecification& algorithm,
      std::string log_path, int64_t offset);

  // The entries of the whole lines appended since the last call, stamped
  // `now_seconds`. The log is opened without following a link
  // (jobs::OpenJobFile); an unreadable log yields nothing.
  std::vector<jobs::HypertuneEntry> Poll(double now_seconds);

 private:
  LogMetrics(MetricMatcher matcher, std::string log_path, int64_t offset)
      : matcher_(std::move(matcher)),
        log_path_(std::move(log_path)),
        offset_(offset) {}

  void MatchLine(absl::string_view line, double now_seconds,
                 std::vector<jobs::HypertuneEntry>& out);

  MetricMatcher matcher_;
  std::string log_path_;
  int64_t offset_;
  std::string partial_;    // A line read without its newline yet.
  bool skipping_ = false;  // Inside a line over the limit.
  int64_t step_ = 0;
  std::map<std::string, double> latest_;  // By metric id.
};

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_LOG_METRICS_H_
