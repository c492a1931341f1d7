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
  absl::StatusOr<std::string> stat = ReadFile("/proc/self/stat");
  if (!stat.ok()) return stat.status();
  // The command name (field 2) may contain spaces and parentheses: fields are
  // counted from the last ')'.
  size_t close = stat->rfind(')');
  if (close == std::string::npos) {
    return absl::UnavailableError("unparsable /proc/self/stat");
  }
  std::istringstream fields(stat->substr(close + 2));
  // Field 3 is the first after ')'; we need 14 utime, 15 stime,
  // 22 starttime, 23 vsize, 24 rss.
  std::string field;
  double utime = 0, stime = 0, starttime = 0, vsize = 0, rss = 0;
  for (int index = 3; index <= 24 && (fields >> field); ++index) {
    switch (index) {
      case 14:
        utime = std::stod(field);
        break;
      case 15:
        stime = std::stod(field);
        break;
      case 22:
        starttime = std::stod(field);
        break;
      case 23:
        vsize = std::stod(field);
        break;
      case 24:
        rss = std::stod(field);
        break;
      default:
        break;
    }
  }
  if (!fields) return absl::UnavailableError("short /proc/self/stat");

  absl::StatusOr<std::string> proc_stat = ReadFile("/proc/stat");
  if (!proc_stat.ok()) return proc_stat.status();
  size_t btime_at = proc_stat->find("\nbtime ");
  if (btime_at == std::string::npos) {
    return absl::UnavailableError("no btime in /proc/stat");
  }
  double boot_time = std::stod(proc_stat->substr(btime_at + 7));

  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats stats;
  stats.cpu_seconds = (utime + stime) / ticks;
  stats.resident_bytes = rss * page;
  stats.virtual_bytes = vsize;
  stats.start_time_seconds = boot_time + starttime / ticks;

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
