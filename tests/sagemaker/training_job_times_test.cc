// A training job's times: the timeline file TrainingRunHooks keeps in the
// job dir (written through no link, a restart keeping the first start) and
// the SecondaryStatusTransitions, time members and LastModifiedTime made
// from it for each status.
#include "sagemaker/training_job_times.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sagemaker/job_timeline.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> Statuses(const json& transitions) {
  std::vector<std::string> out;
  for (const json& t : transitions) out.push_back(t["Status"]);
  return out;
}

JobMoments Moments() {
  JobMoments m;
  m.created = 100;
  m.timeline = {110.0, 150.0, 152.0};  // started, exited, packed
  m.ended = 153;
  return m;
}

TEST(TrainingJobTimesTest, EachStatusEndsItsOwnWay) {
  const std::pair<JobStanding, std::vector<std::string>> cases[] = {
      {{"Completed", "Completed", ""},
       {"Starting", "Training", "Uploading", "Completed"}},
      {{"Stopped", "Stopped", ""},
       {"Starting", "Training", "Stopping", "Stopped"}},
      {{"Stopped", "MaxRuntimeExceeded", ""},
       {"Starting", "Training", "Stopping", "MaxRuntimeExceeded"}},
      {{"Failed", "Failed", ""}, {"Starting", "Training", "Failed"}},
      {{"InProgress", "Training", ""}, {"Starting", "Training", "Uploading"}},
  };
  for (const auto& [standing, statuses] : cases) {
    const json t = SecondaryStatusTransitions(Moments(), standing);
    EXPECT_EQ(Statuses(t), statuses) << standing.secondary;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      EXPECT_EQ(t[i]["EndTime"], t[i + 1]["StartTime"]);
    }
    EXPECT_EQ(t.back().contains("EndTime"), standing.status != "InProgress");
  }
}

TEST(TrainingJobTimesTest, TimesOfACompletedJob) {
  json d;
  AddJobTimes(Moments(), {"Completed", "Completed", ""}, &d);
  EXPECT_EQ(d["TrainingStartTime"], 110.0);  // not CreationTime
  EXPECT_EQ(d["TrainingEndTime"], 153.0);
  EXPECT_EQ(d["TrainingTimeInSeconds"], 43);
  EXPECT_EQ(d["BillableTimeInSeconds"], 43);
  EXPECT_EQ(d["LastModifiedTime"], 152.0);  // Completed once packed
  EXPECT_EQ(d["SecondaryStatusTransitions"][0]["StartTime"], 100.0);
  EXPECT_EQ(d["SecondaryStatusTransitions"][3]["StatusMessage"],
            "Training job completed");
}

TEST(TrainingJobTimesTest, AQueuedOrRunningJobHasNoEnd) {
  JobMoments m;
  m.created = 100;
  json d;
  AddJobTimes(m, {"InProgress", "Starting", ""}, &d);
  EXPECT_EQ(Statuses(d["SecondaryStatusTransitions"]),
            std::vector<std::string>{"Starting"});
  EXPECT_FALSE(d.contains("TrainingStartTime"));
  EXPECT_FALSE(d.contains("TrainingTimeInSeconds"));
  EXPECT_EQ(d["LastModifiedTime"], 100.0);
  m.timeline.training_start = 101;
  d = json::object();
  AddJobTimes(m, {"InProgress", "Training", ""}, &d);
  EXPECT_EQ(d["TrainingStartTime"], 101.0);
  EXPECT_FALSE(d.contains("TrainingEndTime"));
}

TEST(TrainingJobTimesTest, EarlyStoppingSaysWhy) {
  const json t = SecondaryStatusTransitions(
      Moments(), {"Stopped", "Stopped", "early stopping, median rule: ..."});
  EXPECT_EQ(t[2]["StatusMessage"],
            "Stopping the training job: early stopping, median rule: ...");
  JobMoments short_job = Moments();
  short_job.ended = 110.2;  // under a second still bills one
  json d;
  AddJobTimes(short_job, {"Stopped", "Stopped", ""}, &d);
  EXPECT_EQ(d["TrainingTimeInSeconds"], 1);
}

TEST(TrainingJobTimesTest, AJobStoppedBeforeItStartedNeverTrained) {
  JobMoments m;
  m.created = 100;
  m.ended = 105;
  const json t = SecondaryStatusTransitions(m, {"Stopped", "Stopped", ""});
  EXPECT_EQ(Statuses(t), (std::vector<std::string>{"Starting", "Stopped"}));
  EXPECT_EQ(t[1]["StartTime"], 105.0);
}

class TimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cairn-timeline-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TimelineTest, RecordsAndReadsBack) {
  EXPECT_FALSE(ReadTimeline(dir_.string()).training_start.has_value());
  ASSERT_TRUE(RecordTimeline(dir_.string(), TimelineEvent::kStarted, 10).ok());
  ASSERT_TRUE(RecordTimeline(dir_.string(), TimelineEvent::kExited, 20).ok());
  // A restart: the first start stays, the earlier exit goes.
  ASSERT_TRUE(RecordTimeline(dir_.string(), TimelineEvent::kStarted, 30).ok());
  JobTimeline t = ReadTimeline(dir_.string());
  EXPECT_EQ(t.training_start, 10);
  EXPECT_FALSE(t.exited.has_value());
  ASSERT_TRUE(RecordTimeline(dir_.string(), TimelineEvent::kExited, 40).ok());
  ASSERT_TRUE(RecordTimeline(dir_.string(), TimelineEvent::kPacked, 41).ok());
  t = ReadTimeline(dir_.string());
  EXPECT_EQ(t.exited, 40);
  EXPECT_EQ(t.packed, 41);
}

TEST_F(TimelineTest, NeverWritesThroughALink) {
  // The job owns JOB_DIR: it could put a link where ml was.
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::remove_all(dir_ / "ml");
  fs::create_directory_symlink(elsewhere, dir_ / "ml");
  absl::Status s = RecordTimeline(dir_.string(), TimelineEvent::kStarted, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(elsewhere / "timeline.json"));
  EXPECT_FALSE(ReadTimeline(dir_.string()).training_start.has_value());
  // Nor through a link in place of the file.
  fs::remove(dir_ / "ml");
  fs::create_directories(dir_ / "ml");
  fs::create_symlink(elsewhere / "target", dir_ / "ml" / "timeline.json.tmp");
  EXPECT_FALSE(RecordTimeline(dir_.string(), TimelineEvent::kStarted, 1).ok());
  EXPECT_FALSE(fs::exists(elsewhere / "target"));
}

TEST_F(TimelineTest, GarbageReadsAsNothing) {
  std::ofstream(dir_ / "ml" / "timeline.json") << "{\"training_start\": \"x\"";
  EXPECT_FALSE(ReadTimeline(dir_.string()).training_start.has_value());
  std::ofstream(dir_ / "ml" / "timeline.json") << "{\"training_start\": \"x\"}";
  EXPECT_FALSE(ReadTimeline(dir_.string()).training_start.has_value());
  EXPECT_FALSE(ReadTimeline("").training_start.has_value());
}

}  // namespace
}  // namespace cairn::sagemaker
