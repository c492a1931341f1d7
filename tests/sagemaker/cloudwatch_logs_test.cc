// Training jobs' logs as CloudWatch Logs serves them: the log times
// (log_times.h), events cut from hostile bytes (log_stream.h), and the
// operations' requests, paging and tokens (cloudwatch_logs*.h), on real
// files in a temp dir.
#include "sagemaker/cloudwatch_logs.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sagemaker/aws_error.h"
#include "sagemaker/log_stream.h"
#include "sagemaker/log_times.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cwlogs-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) { return (dir_ / name).string(); }

  // Appends `text` to log `name` and notes its times at `ms`.
  void Append(const std::string& name, const std::string& text, int64_t ms) {
    std::ofstream(Path(name), std::ios::app | std::ios::binary) << text;
    LogTimesWriter writer(Path(name), absl::ZeroDuration());
    ASSERT_TRUE(writer.Note(absl::FromUnixMillis(ms)).ok());
  }

  TrainingLogStream Stream(const std::string& name, const std::string& file,
                           bool finished = true) {
    return TrainingLogStream{name, Path(file), 1000, finished};
  }

  fs::path dir_;
};

std::vector<std::string> Messages(const json& events) {
  std::vector<std::string> out;
  for (const json& e : events) out.push_back(e["message"].get<std::string>());
  return out;
}

std::string AwsCode(const absl::Status& s) { return AwsErrorOf(s).code; }

TEST(LogBoundariesTest, LinesAndPiecesOfLongLines) {
  EXPECT_THAT(LogBoundaries("a\nbb\n", 0), ElementsAre(0, 2, 5));
  // A line over the piece size is cut at multiples of it; a short line
  // across a multiple is not.
  std::string bytes(kLogPieceBytes - 2, 'x');
  bytes += "\nshort line\n";
  bytes += std::string(3 * kLogPieceBytes, 'y');
  std::vector<int64_t> cuts = LogBoundaries(bytes, 0);
  const int64_t second = kLogPieceBytes - 1;
  const int64_t third = second + 11;
  // The long line starts at `third`, so the block before 2 * kLogPieceBytes
  // holds a newline: its first piece runs to 3 * kLogPieceBytes.
  EXPECT_THAT(cuts, ElementsAre(0, second, third, 3 * kLogPieceBytes,
                                4 * kLogPieceBytes));
  // The same cuts from a later base, where exact.
  const int64_t base = kLogPieceBytes / 2;
  std::vector<int64_t> later = LogBoundaries(bytes.substr(base), base);
  std::vector<int64_t> exact;
  for (int64_t c : later) {
    if (c >= base + kLogPieceBytes) exact.push_back(c);
  }
  EXPECT_THAT(exact, ElementsAre(3 * kLogPieceBytes, 4 * kLogPieceBytes));
}

TEST_F(LogsTest, TimesStampEachLineWhenFirstSeen) {
  Append("a.log", "one\ntwo\n", 5000);
  Append("a.log", "three\n", 7000);
  absl::StatusOr<LogStreamFile> f = LogStreamFile::Open(Path("a.log"), false);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<LogPage> page = f->Forward(0, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->events.size(), 3u);
  EXPECT_EQ(page->events[0].timestamp_ms, 5000);
  EXPECT_EQ(page->events[1].timestamp_ms, 5000);
  EXPECT_EQ(page->events[2].timestamp_ms, 7000);
  EXPECT_TRUE(page->done);
  EXPECT_EQ(*f->StartOfTime(6000), 8);  // "three" begins at byte 8.
  EXPECT_EQ(*f->StartOfTime(0), 0);
}

TEST_F(LogsTest, RunningLogServesOnlyNotedWholeLines) {
  Append("a.log", "seen\npart", 5000);
  std::ofstream(Path("a.log"), std::ios::app) << "ial\nunseen\n";
  absl::StatusOr<LogStreamFile> running =
      LogStreamFile::Open(Path("a.log"), false);
  ASSERT_TRUE(running.ok());
  absl::StatusOr<LogPage> page = running->Forward(0, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->events.size(), 1u);
  EXPECT_EQ(page->events[0].message, "seen");
  EXPECT_EQ(page->next, 5);
  // Once the job ended, the rest gets the file's time.
  absl::StatusOr<LogStreamFile> done = LogStreamFile::Open(Path("a.log"), true);
  ASSERT_TRUE(done.ok());
  page = done->Forward(5, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->events.size(), 2u);
  EXPECT_EQ(page->events[0].message, "partial");
  EXPECT_GE(page->events[1].timestamp_ms, 5000);
}

TEST_F(LogsTest, TornOrDamagedTimesNeverReadOutsideTheLog) {
  Append("a.log", "one\ntwo\n", 5000);
  {  // A torn record, then one pointing far past the log, going back.
    std::ofstream t(LogTimesPath(Path("a.log")),
                    std::ios::app | std::ios::binary);
    std::string rec(16, '\xff');
    t.write(rec.data(), 16);
    t.write("abc", 3);
  }
  absl::StatusOr<LogStreamFile> f = LogStreamFile::Open(Path("a.log"), true);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->end(), 8);
  absl::StatusOr<LogPage> page = f->Forward(0, {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->events.size(), 2u);
  // The writer drops the torn tail before appending.
  std::ofstream(Path("a.log"), std::ios::app) << "three\n";
  LogTimesWriter writer(Path("a.log"), absl::ZeroDuration());
  ASSERT_TRUE(writer.Note(absl::FromUnixMillis(9000)).ok());
  EXPECT_EQ(fs::file_size(LogTimesPath(Path("a.log"))) % 16, 0u);
}

TEST_F(LogsTest, LinksAreRefused) {
  Append("real.log", "secret\n", 5000);
  fs::create_symlink(Path("real.log"), Path("link.log"));
  EXPECT_EQ(LogStreamFile::Open(Path("link.log"), true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LogsTest, GetLogEventsNewestFirstThenBackAndForward) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "line " + std::to_string(i) + "\n";
  Append("a.log", text, 5000);
  const std::vector<TrainingLogStream> streams = {
      Stream("job/algo-1-1", "a.log")};
  auto get = [&](const std::string& body) {
    absl::StatusOr<GetLogEventsRequest> r = ParseGetLogEvents(body);
    EXPECT_TRUE(r.ok()) << r.status();
    return GetLogEvents(*r, streams);
  };
  const std::string head =
      R"({"logGroupName": "/aws/sagemaker/TrainingJobs",
          "logStreamName": "job/algo-1-1", "limit": 3)";
  absl::StatusOr<json> newest = get(head + "}");
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_THAT(Messages((*newest)["events"]),
              ElementsAre("line 7", "line 8", "line 9"));
  EXPECT_EQ((*newest)["events"][0]["timestamp"], 5000);
  EXPECT_EQ((*newest)["events"][0]["ingestionTime"], 5000);
  absl::StatusOr<json> back =
      get(head + R"(, "nextToken": ")" +
          (*newest)["nextBackwardToken"].get<std::string>() + "\"}");
  ASSERT_TRUE(back.ok());
  EXPECT_THAT(Messages((*back)["events"]),
              ElementsAre("line 4", "line 5", "line 6"));
  // At the end, the token given comes back.
  const std::string fwd = (*newest)["nextForwardToken"];
  absl::StatusOr<json> end =
      get(head + R"(, "startFromHead": true, "nextToken": ")" + fwd + "\"}");
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE((*end)["events"].empty());
  EXPECT_EQ((*end)["nextForwardToken"], fwd);
  // From the head, page by page, every line once.
  std::vector<std::string> all;
  std::string token;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<json> page =
        get(head + R"(, "startFromHead": true)" +
            (token.empty() ? "" : R"(, "nextToken": ")" + token + "\"") + "}");
    ASSERT_TRUE(page.ok());
    for (const std::string& m : Messages((*page)["events"])) all.push_back(m);
    if ((*page)["nextForwardToken"] == token) break;
    token = (*page)["nextForwardToken"];
  }
  EXPECT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front(), "line 0");
  EXPECT_EQ(all.back(), "line 9");
}

TEST_F(LogsTest, GetLogEventsRefusesForeignTokensAndUnknownStreams) {
  Append("a.log", "one\ntwo\n", 5000);
  const std::vector<TrainingLogStream> streams = {
      Stream("job/algo-1-1", "a.log")};
  const std::string head =
      R"({"logGroupName": "/aws/sagemaker/TrainingJobs", "logStreamName": )";
  for (const char* token :
       {"f/2", "f/-1", "x/0", "f/99999999999999999999", "f/100"}) {
    auto r = ParseGetLogEvents(head + R"("job/algo-1-1", "nextToken": ")" +
                               token + "\"}");
    ASSERT_TRUE(r.ok());
    absl::StatusOr<json> out = GetLogEvents(*r, streams);
    EXPECT_EQ(AwsCode(out.status()), "InvalidParameterException") << token;
    EXPECT_LT(out.status().message().size(), 1024u);
  }
  auto r = ParseGetLogEvents(head + R"("job/algo-2-1"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(AwsCode(GetLogEvents(*r, streams).status()),
            "ResourceNotFoundException");
}

TEST_F(LogsTest, BinaryBytesAndHugeLinesStayValidAndBounded) {
  std::string text = "ok \xff\xfe\x01 done\n";
  text += std::string(5 * kLogPieceBytes + 7, 'z') + "\n";
  Append("a.log", text, 5000);
  const std::vector<TrainingLogStream> streams = {
      Stream("job/algo-1-1", "a.log")};
  auto r = ParseGetLogEvents(
      R"({"logGroupName": "/aws/sagemaker/TrainingJobs",
          "logStreamName": "job/algo-1-1", "startFromHead": true})");
  ASSERT_TRUE(r.ok());
  absl::StatusOr<json> out = GetLogEvents(*r, streams);
  ASSERT_TRUE(out.ok());
  const std::string body = LogsResponseBody(*out);
  const json parsed = json::parse(body);  // Valid UTF-8 JSON.
  EXPECT_THAT(parsed["events"][0]["message"].get<std::string>(),
              HasSubstr("ok \xEF\xBF\xBD"));
  int64_t zs = 0;
  for (size_t i = 1; i < parsed["events"].size(); ++i) {
    const std::string m = parsed["events"][i]["message"];
    EXPECT_LE(m.size(), 262118u);  // CloudWatch's largest message.
    EXPECT_EQ(m.find_first_not_of('z'), std::string::npos);
    zs += static_cast<int64_t>(m.size());
  }
  EXPECT_GT(parsed["events"].size(), 3u);
  EXPECT_EQ(zs, 5 * kLogPieceBytes + 7);
}

json Filter(const std::string& body,
            const std::vector<TrainingLogStream>& streams) {
  absl::StatusOr<FilterLogEventsRequest> r = ParseFilterLogEvents(body);
  EXPECT_TRUE(r.ok()) << r.status();
  absl::StatusOr<json> out = FilterLogEvents(*r, streams);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : json();
}

TEST_F(LogsTest, FilterLogEventsInterleavesStreamsAndPagesToTheEnd) {
  Append("1.log", "a1\na2\n", 1000);
  Append("2.log", "b1\n", 1500);
  Append("1.log", "a3\n", 2000);
  Append("2.log", "b2\nb3\n", 2000);
  Append("3.log", "other job\n", 1000);
  const std::vector<TrainingLogStream> streams = {
      Stream("job/algo-1-9", "1.log"), Stream("job/algo-2-9", "2.log"),
      Stream("jobber/algo-1-9", "3.log")};
  const std::string base =
      R"({"logGroupName": "/aws/sagemaker/TrainingJobs", "interleaved": true,
          "logStreamNamePrefix": "job/")";
  const std::string head = base + R"(, "startTime": 0)";
  json all = Filter(head + "}", streams);
  EXPECT_THAT(Messages(all["events"]),
              ElementsAre("a1", "a2", "b1", "a3", "b2", "b3"));
  EXPECT_FALSE(all.contains("nextToken"));
  EXPECT_EQ(all["events"][2]["logStreamName"], "job/algo-2-9");
  EXPECT_TRUE(all["searchedLogStreams"].empty());
  // Two at a time, the same events, each eventId once.
  std::vector<std::string> paged;
  std::set<std::string> ids;
  std::string token;
  for (int i = 0; i < 10; ++i) {
    json page = Filter(
        head + R"(, "limit": 2)" +
            (token.empty() ? "" : R"(, "nextToken": ")" + token + "\"") + "}",
        streams);
    for (const json& e : page["events"]) {
      paged.push_back(e["message"]);
      EXPECT_TRUE(ids.insert(e["eventId"].get<std::string>()).second);
    }
    if (!page.contains("nextToken")) break;
    ASSERT_NE(page["nextToken"], token);
    token = page["nextToken"];
  }
  EXPECT_EQ(paged, Messages(all["events"]));
  // startTime, endTime and terms.
  EXPECT_THAT(
      Messages(Filter(base + R"(, "startTime": 2000})", streams)["events"]),
      ElementsAre("a3", "b2", "b3"));
  EXPECT_THAT(
      Messages(Filter(head + R"(, "endTime": 1500})", streams)["events"]),
      ElementsAre("a1", "a2"));
  EXPECT_THAT(Messages(Filter(head + R"(, "filterPattern": "b \"3\""})",
                              streams)["events"]),
              ElementsAre("b3"));
}

TEST_F(LogsTest, DescribeLogStreamsOrdersPagesAndStopsTheToken) {
  Append("1.log", "x\n", 3000);
  Append("2.log", "y\n", 1000);
  const std::vector<TrainingLogStream> streams = {
      Stream("job/algo-1-9", "1.log"), Stream("job/algo-2-9", "2.log"),
      Stream("new/algo-1-9", "none.log", false)};
  auto describe = [&](const std::string& more) {
    auto r = ParseDescribeLogStreams(
        R"({"logGroupName": "/aws/sagemaker/TrainingJobs")" + more + "}");
    EXPECT_TRUE(r.ok()) << r.status();
    absl::StatusOr<json> out = DescribeLogStreams(*r, streams);
    EXPECT_TRUE(out.ok()) << out.status();
    return *out;
  };
  json job = describe(R"(, "logStreamNamePrefix": "job/")");
  ASSERT_EQ(job["logStreams"].size(), 2u);
  EXPECT_EQ(job["logStreams"][0]["logStreamName"], "job/algo-1-9");
  EXPECT_EQ(job["logStreams"][0]["lastEventTimestamp"], 3000);
  EXPECT_EQ(job["logStreams"][0]["storedBytes"], 0);
  EXPECT_FALSE(job.contains("nextToken"));
  json by_time =
      describe(R"(, "orderBy": "LastEventTime", "descending": true)");
  ASSERT_EQ(by_time["logStreams"].size(), 3u);
  EXPECT_EQ(by_time["logStreams"][0]["logStreamName"], "job/algo-1-9");
  EXPECT_FALSE(by_time["logStreams"][2].contains("firstEventTimestamp"));
  json first = describe(R"(, "limit": 2)");
  ASSERT_EQ(first["logStreams"].size(), 2u);
  json rest = describe(R"(, "limit": 2, "nextToken": ")" +
                       first["nextToken"].get<std::string>() + "\"");
  ASSERT_EQ(rest["logStreams"].size(), 1u);
  EXPECT_EQ(rest["logStreams"][0]["logStreamName"], "new/algo-1-9");
  EXPECT_FALSE(rest.contains("nextToken"));
}

TEST(CloudWatchLogsRequestTest, RefusesByMemberAndValue) {
  struct Case {
    std::string body;
    std::string code;
    std::string text;
  };
  const std::string g = R"("logGroupName": "/aws/sagemaker/TrainingJobs")";
  const std::vector<Case> cases = {
      {"[]", "InvalidParameterException", "request body"},
      {R"({"logGroupName": "/aws/lambda/x"})", "ResourceNotFoundException",
       "/aws/lambda/x"},
      {"{" + g + R"(, "logGroupIdentifier": "x"})", "InvalidParameterException",
       "logGroupIdentifier"},
      {"{" + g + R"(, "limit": 51})", "InvalidParameterException",
       "limit: \"51\""},
      {"{" + g + R"(, "orderBy": "Size"})", "InvalidParameterException",
       "orderBy: \"Size\""},
      {"{" + g + R"(, "logStreamNamePrefix": "a*"})",
       "InvalidParameterException", "logStreamNamePrefix"},
      {"{" + g + R"(, "bogus": 1})", "InvalidParameterException", "bogus"},
      {"{" + g + R"(, "orderBy": "LastEventTime", "logStreamNamePrefix": "j"})",
       "InvalidParameterException", "orderBy LastEventTime"},
  };
  for (const Case& c : cases) {
    absl::Status s = ParseDescribeLogStreams(c.body).status();
    EXPECT_EQ(AwsCode(s), c.code) << c.body;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.text)) << c.body;
    EXPECT_LT(s.message().size(), 1024u);
  }
  EXPECT_EQ(AwsCode(ParseFilterLogEvents("{" + g +
                                         R"(, "filterPattern": "{ $.x = 1 }"})")
                        .status()),
            "InvalidParameterException");
  EXPECT_EQ(AwsCode(ParseGetLogEvents("{" + g + R"(, "logStreamName": "a",
                                         "startTime": -1})")
                        .status()),
            "InvalidParameterException");
  EXPECT_TRUE(ParseGetLogEvents(R"({"logGroupIdentifier":
      "arn:aws:logs:local:000000000000:log-group:/aws/sagemaker/TrainingJobs",
      "logStreamName": "a"})")
                  .ok());
  EXPECT_EQ(DescribeLogGroups(
                *ParseDescribeLogGroups("{}"))["logGroups"][0]["logGroupName"],
            kTrainingJobsLogGroup);
  EXPECT_TRUE(DescribeLogGroups(*ParseDescribeLogGroups(
      R"({"logGroupNamePrefix": "/aws/lambda"})"))["logGroups"]
                  .empty());
}

}  // namespace
}  // namespace cairn::sagemaker
