// Process metrics in the Prometheus client conventions (process_*), read from
// /proc/self at scrape time, and the data directory's filesystem.
#ifndef CAIRN_MONITORING_PROCESS_METRICS_H_
#define CAIRN_MONITORING_PROCESS_METRICS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace cairn::monitoring {

struct ProcessStats {
  double cpu_seconds = 0.0;       // user + system CPU time
  double resident_bytes = 0.0;    // RSS
  double virtual_bytes = 0.0;     // VSZ
  double start_time_seconds = 0;  // since the Unix epoch
  double open_fds = 0.0;
  double max_fds = 0.0;  // soft RLIMIT_NOFILE
};

// Reads the calling process's stats. Returns Unavailable when /proc cannot
// be read or parsed (e.g. not Linux). Thread-safe.
absl::StatusOr<ProcessStats> ReadProcessStats();

// The six process_* families of `stats`.
std::vector<prometheus::MetricFamily> ProcessMetricFamilies(
    const ProcessStats& stats);

// cairn_store_filesystem_{avail,size}_bytes of the filesystem holding `dir`;
// none when `dir` is empty or cannot be read.
std::vector<prometheus::MetricFamily> FilesystemMetricFamilies(
    const std::string& dir);

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_PROCESS_METRICS_H_
