// util/proc_stat.h: /proc/<pid>/stat parsed without exceptions.
#include "util/proc_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace cairn::util {
namespace {

// Fields 3 to 24 of a stat line, numbered so field N holds N * 10.
std::string FieldsFrom3() {
  std::string out;
  for (int n = 3; n <= 24; ++n) absl::StrAppend(&out, " ", n * 10);
  return out;
}

TEST(ProcStatTest, ParsesTheFieldsAfterTheCommand) {
  absl::StatusOr<ProcStat> stat =
      ParseProcStat(absl::StrCat("42 (a) b) c)", FieldsFrom3(), " 250\n"));
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->utime_ticks, 140);
  EXPECT_EQ(stat->stime_ticks, 150);
  EXPECT_EQ(stat->start_ticks, 220);
  EXPECT_EQ(stat->vsize_bytes, 230);
  EXPECT_EQ(stat->rss_pages, 240);
}

TEST(ProcStatTest, MalformedTextIsAnErrorNotAThrow) {
  for (const std::string& text :
       {std::string(), std::string("42 (cmd"), std::string("42 (cmd)"),
        absl::StrCat("42 (cmd)", FieldsFrom3().substr(0, 20)),
        absl::StrCat("42 (cmd) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 ",
                     "19 20 21 22"),
        absl::StrCat("42 (cmd) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 ",
                     "99999999999999999999999 20 21 22")}) {
    absl::StatusOr<ProcStat> stat = ParseProcStat(text);
    EXPECT_EQ(stat.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(ProcStatTest, ReadsThisProcess) {
  absl::StatusOr<ProcStat> self = ReadProcStat("self");
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_GT(self->start_ticks, 0);
  EXPECT_GT(self->vsize_bytes, 0);
  absl::StatusOr<ProcStat> by_pid = ReadProcStat(absl::StrCat(getpid()));
  ASSERT_TRUE(by_pid.ok()) << by_pid.status();
  EXPECT_EQ(by_pid->start_ticks, self->start_ticks);
}

TEST(ProcStatTest, MissingProcessIsNotFound) {
  EXPECT_EQ(ReadProcStat("no-such-pid").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cairn::util
