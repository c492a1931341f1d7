// The gauge families computed at scrape time: build info and the study, job,
// GPU and store gauges of a service Snapshot (metrics.h lists them).
#ifndef CAIRN_MONITORING_GAUGE_FAMILIES_H_
#define CAIRN_MONITORING_GAUGE_FAMILIES_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "monitoring/metrics.h"
#include "prometheus/metric_family.h"

namespace cairn::monitoring {

// The study state label values, each exported even when no study has it.
inline constexpr std::string_view kStudyStates[] = {"active", "inactive",
                                                    "completed", "failed"};
// The trial state label values, each exported even when no trial has it.
inline constexpr std::string_view kTrialStates[] = {
    "requested",  "active", "stopping", "succeeded",
    "infeasible", "failed", "cancelled"};

// An empty gauge family.
prometheus::MetricFamily GaugeFamily(std::string name, std::string help);

// Appends one sample with `labels` (name, value pairs) to `family`.
void AddGauge(prometheus::MetricFamily& family,
              std::vector<std::pair<std::string, std::string>> labels,
              double value);

// cairn_build_info{version,cuda} = 1.
prometheus::MetricFamily BuildInfoFamily(const BuildInfo& build);

// The service and per-study gauges of `snapshot`, in exposition order:
// cairn_jobs, cairn_cluster_jobs, cairn_jobs_max_running, cairn_gpu_slots,
// cairn_store_bytes, cairn_store_writable, cairn_studies, cairn_study_info,
// cairn_trials, cairn_study_best_objective, cairn_trial_metric_latest.
// Families without samples are left out (they would be a HELP/TYPE header
// alone). State and algorithm values are exported in lower case.
std::vector<prometheus::MetricFamily> SnapshotGaugeFamilies(
    const Snapshot& snapshot);

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_GAUGE_FAMILIES_H_
