// cloudml-hypertune metric file parsing.
#include "jobs/hypertune.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "api/limits.h"
#include "api/request_limits.h"
#include "cairn/v1/study.pb.h"
#include "jobs/job_files.h"
#include "nlohmann/json.hpp"

namespace cairn::jobs {
namespace {

// The writer keeps 100 short lines; a file larger than this is read from
// its last kMaxReadBytes only (its first, partial line is skipped).
constexpr int64_t kMaxReadBytes = 4 << 20;

// The text of the file at `path` (its tail past kMaxReadBytes), or "" when
// it is missing or not a plain file (OpenJobFile: never through a link).
std::string ReadTail(const std::string& path) {
  absl::StatusOr<ScopedFd> fd = OpenJobFile(path, O_RDONLY);
  struct stat st;
  if (!fd.ok() || fstat(fd->get(), &st) != 0) return "";
  const int64_t start = std::max<int64_t>(0, st.st_size - kMaxReadBytes);
  absl::StatusOr<std::string> text =
      ReadAt(fd->get(), start, static_cast<size_t>(st.st_size - start));
  return text.ok() ? *std::move(text) : "";
}

bool ToDouble(const nlohmann::json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  return v.is_string() && absl::SimpleAtod(v.get<std::string>(), out);
}

// Whether `key` is a metric id the API would accept (api/limits.h): the job's
// file gets no more than its RPCs would.
bool IsMetricId(const std::string& key) {
  cairn::v1::Metric metric;
  metric.set_metric_id(key);
  return api::CheckRequestLimits(metric).ok();
}

}  // namespace

bool ParseHypertuneLine(absl::string_view line, HypertuneEntry* out) {
  if (line.empty()) return false;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  HypertuneEntry e;
  if (!j.contains("timestamp") || !ToDouble(j["timestamp"], &e.timestamp)) {
    return false;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "timestamp" || key == "trial") continue;
    double value = 0;
    if (!ToDouble(it.value(), &value)) return false;
    if (key == "global_step") {
      // NaN or beyond int64 would make the cast undefined.
      if (!(std::abs(value) < 9.2e18)) return false;
      e.global_step = static_cast<int64_t>(value);
    } else {
      if (!IsMetricId(key)) return false;
      e.metrics[key] = value;
    }
  }
  if (e.metrics.empty() ||
      e.metrics.size() > static_cast<size_t>(cairn::api::kMaxMetrics)) {
    return false;
  }
  *out = std::move(e);
  return true;
}

std::vector<HypertuneEntry> ParseHypertune(const std::string& text) {
  std::vector<HypertuneEntry> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    HypertuneEntry e;
    if (ParseHypertuneLine(line, &e)) out.push_back(std::move(e));
  }
  return out;
}

std::vector<HypertuneEntry> ReadHypertuneSince(const std::string& path,
                                               double after_timestamp) {
  const std::string text = ReadTail(path);
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  // From the end back to the first entry already read: the writer adds
  // entries in time order, so only the new lines are parsed.
  std::vector<HypertuneEntry> out;
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    HypertuneEntry e;
    if (!ParseHypertuneLine(*line, &e)) continue;
    if (e.timestamp <= after_timestamp) break;
    out.push_back(std::move(e));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace cairn::jobs
