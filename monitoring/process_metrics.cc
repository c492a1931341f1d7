// Reads /proc/self/stat, /proc/stat and /proc/self/fd for process_* metrics.
#include "monitoring/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "util/proc_stat.h"

namespace cairn::monitoring {
namespace {

absl::StatusOr<std::string> ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(std::string("cannot read ") + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

prometheus::MetricFamily Single(const char* name, const char* help,
                                prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats() {
  absl::StatusOr<util::ProcStat> stat = util::ReadProcStat("self");
  if (!stat.ok()) return absl::UnavailableError(stat.status().message());

  absl::StatusOr<std::string> proc_stat = ReadFile("/proc/stat");
  if (!proc_stat.ok()) return proc_stat.status();
  size_t btime_at = proc_stat->find("\nbtime ");
  if (btime_at == std::string::npos) {
    return absl::UnavailableError("no btime in /proc/stat");
  }
  const absl::string_view btime_text =
      absl::string_view(*proc_stat).substr(btime_at + 7);
  int64_t boot_time = 0;
  if (!absl::SimpleAtoi(btime_text.substr(0, btime_text.find('\n')),
                        &boot_time)) {
    return absl::UnavailableError("unparsable btime in /proc/stat");
  }

  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats stats;
  stats.cpu_seconds =
      static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks;
  stats.resident_bytes = static_cast<double>(stat->rss_pages) * page;
  stats.virtual_bytes = static_cast<double>(stat->vsize_bytes);
  stats.start_time_seconds = static_cast<double>(boot_time) +
                             static_cast<double>(stat->start_ticks) / ticks;

  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr)
    return absl::UnavailableError("cannot list /proc/self/fd");
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  stats.open_fds = count - 1;  // minus the descriptor of the listing itself

  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    stats.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return stats;
}

std::vector<prometheus::MetricFamily> ProcessMetricFamilies(
    const ProcessStats& stats) {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  families.push_back(Single("process_cpu_seconds_total",
                            "Total user and system CPU time spent in seconds.",
                            MetricType::Counter, stats.cpu_seconds));
  families.push_back(Single("process_resident_memory_bytes",
                            "Resident memory size in bytes.", MetricType::Gauge,
                            stats.resident_bytes));
  families.push_back(Single("process_virtual_memory_bytes",
                            "Virtual memory size in bytes.", MetricType::Gauge,
                            stats.virtual_bytes));
  families.push_back(
      Single("process_start_time_seconds",
             "Start time of the process since unix epoch in seconds.",
             MetricType::Gauge, stats.start_time_seconds));
  families.push_back(Single("process_open_fds",
                            "Number of open file descriptors.",
                            MetricType::Gauge, stats.open_fds));
  families.push_back(Single("process_max_fds",
                            "Maximum number of open file descriptors.",
                            MetricType::Gauge, stats.max_fds));
  return families;
}

std::vector<prometheus::MetricFamily> FilesystemMetricFamilies(
    const std::string& dir) {
  std::vector<prometheus::MetricFamily> families;
  struct statvfs fs {};
  if (dir.empty() || statvfs(dir.c_str(), &fs) != 0) return families;
  const double block = static_cast<double>(fs.f_frsize);
  families.push_back(Single(
      "cairn_store_filesystem_avail_bytes",
      "Bytes available to cairnd on the data directory's filesystem.",
      prometheus::MetricType::Gauge, static_cast<double>(fs.f_bavail) * block));
  families.push_back(Single("cairn_store_filesystem_size_bytes",
                            "Size in bytes of the data directory's filesystem.",
                            prometheus::MetricType::Gauge,
                            static_cast<double>(fs.f_blocks) * block));
  return families;
}

}  // namespace cairn::monitoring
