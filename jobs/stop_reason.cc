// The stored text of each StopReason.
#include "jobs/stop_reason.h"

namespace cairn::jobs {

absl::string_view StopReasonText(StopReason reason) {
  switch (reason) {
    case StopReason::kTimeout:
      return "timeout";
    case StopReason::kCancelled:
      return "cancelled";
    case StopReason::kStopped:
      return "stopped";
  }
  return "stopped";
}

}  // namespace cairn::jobs
