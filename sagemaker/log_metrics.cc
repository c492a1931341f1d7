// See log_metrics.h.
#include "sagemaker/log_metrics.h"

#include <fcntl.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "jobs/job_files.h"
#include "jobs/job_logs.h"
#include "sagemaker/training_job_view.h"

namespace cairn::sagemaker {
namespace {

constexpr size_t kMaxLine = 64 << 10;
constexpr size_t kMaxRead = 1 << 20;  // Per poll; the rest waits.

}  // namespace

absl::StatusOr<LogMetrics> LogMetrics::Create(
    const cairn::v1::SageMakerAlgorithmSpecification& algorithm,
    std::string log_path, int64_t offset) {
  absl::StatusOr<MetricMatcher> matcher =
      MetricMatcher::Create(algorithm.metric_definitions());
  if (!matcher.ok()) return matcher.status();
  return LogMetrics(*std::move(matcher), std::move(log_path), offset);
}

void LogMetrics::MatchLine(absl::string_view line, double now_seconds,
                           std::vector<jobs::HypertuneEntry>& out) {
  if (absl::StartsWith(line, jobs::kAttemptHeaderPrefix)) return;
  std::vector<std::pair<std::string, double>> found = matcher_.Match(line);
  if (found.empty()) return;
  for (const auto& [name, value] : found) latest_[MetricIdOf(name)] = value;
  jobs::HypertuneEntry entry;
  entry.timestamp = now_seconds;
  entry.global_step = ++step_;
  entry.metrics = latest_;
  out.push_back(std::move(entry));
}

std::vector<jobs::HypertuneEntry> LogMetrics::Poll(double now_seconds) {
  std::vector<jobs::HypertuneEntry> out;
  absl::StatusOr<jobs::ScopedFd> fd =
      jobs::OpenJobFile(log_path_, O_RDONLY | O_NONBLOCK);
  if (!fd.ok()) return out;
  absl::StatusOr<std::string> text = jobs::ReadAt(fd->get(), offset_, kMaxRead);
  if (!text.ok()) return out;
  offset_ += static_cast<int64_t>(text->size());
  absl::string_view rest = *text;
  for (size_t nl = rest.find('\n'); nl != absl::string_view::npos;
       nl = rest.find('\n')) {
    absl::string_view piece = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!skipping_ && partial_.size() + piece.size() <= kMaxLine) {
      partial_.append(piece.data(), piece.size());
      MatchLine(partial_, now_seconds, out);
    }
    partial_.clear();
    skipping_ = false;
  }
  if (partial_.size() + rest.size() > kMaxLine) {
    skipping_ = true;
    partial_.clear();
  } else if (!skipping_) {
    partial_.append(rest.data(), rest.size());
  }
  return out;
}

}  // namespace cairn::sagemaker
