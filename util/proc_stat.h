// The fields of Linux's /proc/<pid>/stat that Cairn uses (CPU time, start
// time, memory), read without exceptions: a missing process or text that is
// not what the kernel writes is a Status, never a throw.
#ifndef CAIRN_UTIL_PROC_STAT_H_
#define CAIRN_UTIL_PROC_STAT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::util {

// Fields of /proc/<pid>/stat, numbered as in proc(5).
struct ProcStat {
  int64_t utime_ticks = 0;  // (14) user CPU time, in clock ticks
  int64_t stime_ticks = 0;  // (15) system CPU time, in clock ticks
  int64_t start_ticks = 0;  // (22) start time, in clock ticks since boot
  int64_t vsize_bytes = 0;  // (23) virtual memory size
  int64_t rss_pages = 0;    // (24) resident set size, in pages
};

// Parses the text of a /proc/<pid>/stat file. The command (field 2) may hold
// spaces and parentheses, so fields are counted from its last ')'.
// InvalidArgument if there is no ')', fewer than 24 fields, or one of the
// fields above is not a decimal integer.
absl::StatusOr<ProcStat> ParseProcStat(absl::string_view text);

// /proc/<pid>/stat of `pid` ("self" or a decimal pid), parsed. NotFound if it
// cannot be read (no such process); InvalidArgument as ParseProcStat.
absl::StatusOr<ProcStat> ReadProcStat(absl::string_view pid);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_PROC_STAT_H_
