// util/time_proto.h: absl time <-> protobuf Timestamp/Duration.
#include "util/time_proto.h"

#include <gtest/gtest.h>

namespace cairn::util {
namespace {

TEST(TimeProtoTest, TimestampSplitsSecondsAndNanos) {
  const absl::Time t =
      absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123456789);
  const google::protobuf::Timestamp ts = ToProtoTimestamp(t);
  EXPECT_EQ(ts.seconds(), 1700000000);
  EXPECT_EQ(ts.nanos(), 123456789);
  EXPECT_EQ(FromProtoTimestamp(ts), t);
}

TEST(TimeProtoTest, TimestampTruncatesBelowANanosecond) {
  const absl::Time t = absl::FromUnixNanos(5) + absl::Nanoseconds(3) / 4;
  EXPECT_EQ(ToProtoTimestamp(t).nanos(), 5);
}

TEST(TimeProtoTest, TimestampBeforeTheEpochIsNormalized) {
  const google::protobuf::Timestamp ts =
      ToProtoTimestamp(absl::UnixEpoch() - absl::Milliseconds(1500));
  EXPECT_EQ(ts.seconds(), -2);
  EXPECT_EQ(ts.nanos(), 500000000);
  EXPECT_EQ(FromProtoTimestamp(ts),
            absl::UnixEpoch() - absl::Milliseconds(1500));
}

TEST(TimeProtoTest, EpochAndDefaultTimestampMatch) {
  EXPECT_EQ(FromProtoTimestamp(google::protobuf::Timestamp()),
            absl::UnixEpoch());
  const google::protobuf::Timestamp ts = ToProtoTimestamp(absl::UnixEpoch());
  EXPECT_EQ(ts.seconds(), 0);
  EXPECT_EQ(ts.nanos(), 0);
}

TEST(TimeProtoTest, DurationRoundTrips) {
  const absl::Duration d = absl::Seconds(90) + absl::Nanoseconds(7);
  const google::protobuf::Duration p = ToProtoDuration(d);
  EXPECT_EQ(p.seconds(), 90);
  EXPECT_EQ(p.nanos(), 7);
  EXPECT_EQ(FromProtoDuration(p), d);
}

TEST(TimeProtoTest, NegativeDurationCarriesTheSignInBothFields) {
  const google::protobuf::Duration p =
      ToProtoDuration(-absl::Milliseconds(1500));
  EXPECT_EQ(p.seconds(), -1);
  EXPECT_EQ(p.nanos(), -500000000);
  EXPECT_EQ(FromProtoDuration(p), -absl::Milliseconds(1500));
}

TEST(TimeProtoTest, DurationTruncatesTowardZero) {
  const absl::Duration d = absl::Nanoseconds(11) / 4;  // 2.75 ns
  EXPECT_EQ(ToProtoDuration(d).nanos(), 2);
  EXPECT_EQ(ToProtoDuration(-d).nanos(), -2);
}

TEST(TimeProtoTest, SecondsRoundToTheNearestNanosecond) {
  google::protobuf::Duration p = SecondsToProtoDuration(2.5);
  EXPECT_EQ(p.seconds(), 2);
  EXPECT_EQ(p.nanos(), 500000000);
  p = SecondsToProtoDuration(1.0000000006);
  EXPECT_EQ(p.seconds(), 1);
  EXPECT_EQ(p.nanos(), 1);
}

TEST(TimeProtoTest, SecondsFractionThatRoundsUpCarries) {
  const google::protobuf::Duration p = SecondsToProtoDuration(0.9999999999);
  EXPECT_EQ(p.seconds(), 1);
  EXPECT_EQ(p.nanos(), 0);
}

}  // namespace
}  // namespace cairn::util
