#include "util/flags/byte_size.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

TEST(ByteSizeTest, ParsesNumbersAndSuffixes) {
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "0"), 0u);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "1048576"), 1048576u);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "512B"), 512u);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "4KB"), 4096u);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "256MB"), 256u << 20);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "256mb"), 256u << 20);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "2GB"), uint64_t{2} << 30);
  EXPECT_EQ(*util::flags::ParseByteSize("--f", "3TB"), uint64_t{3} << 40);
}

TEST(ByteSizeTest, RefusesOtherTextNamingFlagAndValue) {
  for (const char* bad : {"", "MB", "-1", "1.5GB", "12 MB", "10XB",
                          "99999999999999999999", "17179869184GB"}) {
    absl::StatusOr<uint64_t> r =
        util::flags::ParseByteSize("--min-free-space", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("--min-free-space: '"));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad));
  }
}

}  // namespace
}  // namespace cairn
