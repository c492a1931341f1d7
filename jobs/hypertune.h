// Reads the cloudml-hypertune metric file protocol: JSON lines, sorted keys,
// every value a string except "timestamp", e.g.
//   {"global_step": "1000", "loss": "0.31", "timestamp": 1525851440.12,
//   "trial": "3"}
// The writer keeps the last 100 reports and rewrites the whole file on each
// report, so entries are identified by their timestamp. What the job runner
// does with them (jobs/job_runner.h): in a resumed attempt, entries at or
// below the trial's last stored step are dropped, not stored.
#ifndef CAIRN_JOBS_HYPERTUNE_H_
#define CAIRN_JOBS_HYPERTUNE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::jobs {

struct HypertuneEntry {
  double timestamp = 0;
  int64_t global_step = 0;
  std::map<std::string, double> metrics;  // Every key but the reserved ones.
};

// Parses the file's text. Lines that are not valid entries (a torn last
// line while the writer rewrites the file, unparsable numbers, a key that
// is not a metric id the API accepts, more than kMaxMetrics metrics) are
// skipped.
std::vector<HypertuneEntry> ParseHypertune(const std::string& text);

// One line of the file; false for a line that is not a valid entry.
bool ParseHypertuneLine(absl::string_view line, HypertuneEntry* out);

// Entries of the file at `path` newer than `after_timestamp`, in file order.
// The writer adds entries in time order, so the file is read from its end
// back to the first entry not newer than `after_timestamp`: a poll parses
// only the new lines, not all 100. A missing file yields no entries, and so
// does a link or anything but a regular file (the job owns its job dir:
// jobs/job_files.h); of a file over 4 MiB only the last 4 MiB are read.
std::vector<HypertuneEntry> ReadHypertuneSince(const std::string& path,
                                               double after_timestamp);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_HYPERTUNE_H_
