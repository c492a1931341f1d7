// See time_proto.h.
#include "util/time_proto.h"

#include <cmath>
#include <cstdint>

#include "google/protobuf/util/time_util.h"

namespace cairn::util {

google::protobuf::Timestamp ToProtoTimestamp(absl::Time t) {
  return google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
      absl::ToUnixNanos(t));
}

absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  out.set_seconds(absl::ToInt64Seconds(d));
  out.set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(d % absl::Seconds(1))));
  return out;
}

absl::Duration FromProtoDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

google::protobuf::Duration SecondsToProtoDuration(double seconds) {
  google::protobuf::Duration d;
  const double whole = std::floor(seconds);
  d.set_seconds(static_cast<int64_t>(whole));
  d.set_nanos(static_cast<int32_t>(std::llround((seconds - whole) * 1e9)));
  if (d.nanos() >= 1000000000) {
    d.set_seconds(d.seconds() + 1);
    d.set_nanos(d.nanos() - 1000000000);
  }
  return d;
}

}  // namespace cairn::util
