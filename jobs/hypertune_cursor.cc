// Incremental reads of a running attempt's hypertune file.
#include "jobs/hypertune_cursor.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "spdlog/spdlog.h"

namespace cairn::jobs {

HypertuneCursor::HypertuneCursor(std::string path, double timestamp,
                                 int64_t step_floor)
    : path_(std::move(path)), timestamp_(timestamp), step_floor_(step_floor) {}

std::optional<std::vector<HypertuneEntry>> HypertuneCursor::Poll(
    const std::string& trial_name) {
  // Every pass polls every running job: skip the read and parse unless the
  // writer replaced or grew the file since the last look.
  // lstat: a link the job left there is never followed (nor read below).
  struct stat st;
  if (lstat(path_.c_str(), &st) != 0) return std::nullopt;  // Not written.
  const int64_t mtime =
      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  if (!S_ISREG(st.st_mode) || (mtime == mtime_ns_ && st.st_size == size_)) {
    return std::nullopt;
  }
  mtime_ns_ = mtime;
  size_ = st.st_size;
  std::vector<HypertuneEntry> entries = ReadHypertuneSince(path_, timestamp_);
  if (entries.empty()) return std::nullopt;
  timestamp_ = entries.back().timestamp;
  DropReplayedSteps(trial_name, entries);
  return entries;
}

void HypertuneCursor::RaiseStepFloor(int64_t step) {
  step_floor_ = std::max(step_floor_, step);
}

void HypertuneCursor::DropReplayedSteps(const std::string& trial_name,
                                        std::vector<HypertuneEntry>& entries) {
  if (step_floor_ < 0) return;
  const int64_t floor = step_floor_;
  std::vector<HypertuneEntry> kept;
  for (HypertuneEntry& e : entries) {
    if (e.global_step <= step_floor_) continue;
    step_floor_ = e.global_step;
    kept.push_back(std::move(e));
  }
  if (kept.size() < entries.size()) {
    spdlog::info(
        "job {}: dropped {} hypertune report(s) at or below step {}, stored "
        "before the resume",
        trial_name, entries.size() - kept.size(), floor);
  }
  entries = std::move(kept);
}

std::vector<MeasurementReport> ToReports(
    const std::string& trial_name, const std::vector<HypertuneEntry>& entries) {
  std::vector<MeasurementReport> reports;
  for (const HypertuneEntry& e : entries) {
    MeasurementReport m;
    m.trial_name = trial_name;
    m.measurement.set_step_count(e.global_step);
    for (const auto& [k, v] : e.metrics) {
      auto* metric = m.measurement.add_metrics();
      metric->set_metric_id(k);
      metric->set_value(v);
    }
    reports.push_back(std::move(m));
  }
  return reports;
}

}  // namespace cairn::jobs
