// The one text form of a duration on Cairn's command lines (cairn token
// create --expires, cairn audit list --since, cairnd --audit-retention).
#ifndef CAIRN_UTIL_FLAGS_DURATIONS_H_
#define CAIRN_UTIL_FLAGS_DURATIONS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace cairn::util::flags {

// A positive duration: "30d" (days of 24 h), or any absl duration ("90m",
// "12h", "1h30m", "500ms"). InvalidArgument naming `flag` and (the start
// of) `text` otherwise.
absl::StatusOr<absl::Duration> ParseFlagDuration(absl::string_view flag,
                                                 absl::string_view text);

}  // namespace cairn::util::flags

#endif  // CAIRN_UTIL_FLAGS_DURATIONS_H_
