// JobServerAddress: the CAIRN_SERVER jobs get from --job-server.
#include "server/listen_policy.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

TEST(JobServerAddressTest, DefaultIsTheLoopbackJobsPort) {
  EXPECT_EQ(*JobServerAddress("", 50051, 41234), "127.0.0.1:41234");
}

TEST(JobServerAddressTest, HostAloneGetsTheGrpcPort) {
  EXPECT_EQ(*JobServerAddress("cairnd.example.org", 50051, 41234),
            "cairnd.example.org:50051");
  EXPECT_EQ(*JobServerAddress("10.0.0.5", 443, 1), "10.0.0.5:443");
  EXPECT_EQ(*JobServerAddress("fd00::5", 50051, 1), "[fd00::5]:50051");
  EXPECT_EQ(*JobServerAddress("[fd00::5]", 50051, 1), "[fd00::5]:50051");
}

TEST(JobServerAddressTest, HostAndPortAreKept) {
  EXPECT_EQ(*JobServerAddress("head-node:7000", 50051, 1), "head-node:7000");
  EXPECT_EQ(*JobServerAddress("[fd00::5]:7000", 50051, 1), "[fd00::5]:7000");
}

TEST(JobServerAddressTest, BadValuesNameTheFlagAndValue) {
  for (const char* bad : {"http://head:50051", "head:0", "head:70000",
                          "head:port", "head:", ":50051", "[fd00::5",
                          "[fd00::5]x7000", "head node", "a@b:1"}) {
    absl::StatusOr<std::string> got = JobServerAddress(bad, 50051, 1);
    ASSERT_FALSE(got.ok()) << bad << " gave " << *got;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(got.status().message(), "--job-server"));
    EXPECT_TRUE(absl::StrContains(got.status().message(), bad)) << got.status();
  }
}

}  // namespace
}  // namespace cairn
