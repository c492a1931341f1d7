// See proc_stat.h.
#include "util/proc_stat.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/bounded_file.h"

namespace cairn::util {
namespace {

// The file is one line of 52 numbers and a command of at most 64 bytes.
constexpr size_t kMaxStatBytes = 4096;

// Field 3 is the first after the command's ')'.
constexpr int kFirstFieldAfterCommand = 3;
constexpr int kLastFieldRead = 24;

absl::Status ParseField(const std::vector<absl::string_view>& fields,
                        int number, int64_t* out) {
  if (absl::SimpleAtoi(fields[number - kFirstFieldAfterCommand], out)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("/proc stat: field ", number, " is not an integer"));
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(absl::string_view text) {
  const size_t close = text.rfind(')');
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError("/proc stat: no ')' after the command");
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(
      text.substr(close + 1), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  if (fields.size() < kLastFieldRead - kFirstFieldAfterCommand + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "/proc stat: ", fields.size() + 2, " fields, not ", kLastFieldRead));
  }
  ProcStat stat;
  for (const auto& [number, out] :
       {std::pair<int, int64_t*>{14, &stat.utime_ticks},
        {15, &stat.stime_ticks},
        {22, &stat.start_ticks},
        {23, &stat.vsize_bytes},
        {24, &stat.rss_pages}}) {
    if (absl::Status s = ParseField(fields, number, out); !s.ok()) return s;
  }
  return stat;
}

absl::StatusOr<ProcStat> ReadProcStat(absl::string_view pid) {
  absl::StatusOr<std::string> text =
      ReadFileAtMost(absl::StrCat("/proc/", pid, "/stat"), kMaxStatBytes);
  if (!text.ok()) return text.status();
  return ParseProcStat(*text);
}

}  // namespace cairn::util
