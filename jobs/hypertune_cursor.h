// Follows the hypertune file (jobs/hypertune.h) of one running attempt, so
// that each pass of the job runner stores only what the job reported since
// the last pass, and a resumed attempt never stores a step twice.
#ifndef CAIRN_JOBS_HYPERTUNE_CURSOR_H_
#define CAIRN_JOBS_HYPERTUNE_CURSOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobs/hypertune.h"
#include "trials/study_manager.h"

namespace cairn::jobs {

// Not thread-safe: one owner (the job runner, under its pass lock).
class HypertuneCursor {
 public:
  HypertuneCursor() = default;
  // `timestamp`: entries at or before it were read already (the attempt's
  // stored TrialJob.hypertune_timestamp). `step_floor`: in a resumed attempt
  // the highest step stored for the trial; -1 (a first attempt) drops
  // nothing.
  HypertuneCursor(std::string path, double timestamp, int64_t step_floor);

  // The entries written since the last poll, in file order; nullopt when
  // there are none (the file is missing, unchanged, a link, or holds nothing
  // newer than timestamp()). The file is read and parsed only when its
  // modification time or size changed, and never through a link. Entries at
  // or below the step floor are dropped (logged with `trial_name`), the
  // floor rising as entries pass, so the result may be empty while
  // timestamp() moved on.
  std::optional<std::vector<HypertuneEntry>> Poll(
      const std::string& trial_name);

  // The timestamp of the last entry read.
  double timestamp() const { return timestamp_; }

  // Drops entries at or below `step` from now on (an attempt the cluster
  // restarted replays its steps); never lowers the floor.
  void RaiseStepFloor(int64_t step);

 private:
  // Removes entries at or below step_floor_, raising it as entries pass.
  void DropReplayedSteps(const std::string& trial_name,
                         std::vector<HypertuneEntry>& entries);

  std::string path_;
  double timestamp_ = 0;
  // Last seen modification time (ns) and size of the file.
  int64_t mtime_ns_ = 0;
  int64_t size_ = 0;
  int64_t step_floor_ = -1;
};

// One MeasurementReport of trial `trial_name` per entry: its global_step as
// the step count, and its metrics.
std::vector<MeasurementReport> ToReports(
    const std::string& trial_name, const std::vector<HypertuneEntry>& entries);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_HYPERTUNE_CURSOR_H_
