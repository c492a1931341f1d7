// Conversions between absl::Time / absl::Duration and
// google.protobuf.Timestamp / Duration, written once so that every component
// rounds and splits seconds and nanoseconds the same way.
#ifndef CAIRN_UTIL_TIME_PROTO_H_
#define CAIRN_UTIL_TIME_PROTO_H_

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace cairn::util {

// `t` as a Timestamp at nanosecond precision, normalized (0 <= nanos < 1e9).
// Times outside the range of int64 nanoseconds since the epoch (before 1677
// or after 2262) saturate to its ends.
google::protobuf::Timestamp ToProtoTimestamp(absl::Time t);

// The absl::Time of `ts`; exact for every valid Timestamp.
absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& ts);

// `d` as a Duration truncated toward zero to whole nanoseconds; seconds and
// nanos carry the sign of `d`.
google::protobuf::Duration ToProtoDuration(absl::Duration d);

// The absl::Duration of `d`; exact for every valid Duration.
absl::Duration FromProtoDuration(const google::protobuf::Duration& d);

// `seconds` as a Duration: whole seconds rounded down, the fraction rounded
// to the nearest nanosecond (a fraction that rounds up to 1 s carries).
// REQUIRES: `seconds` is finite and fits int64.
google::protobuf::Duration SecondsToProtoDuration(double seconds);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_TIME_PROTO_H_
