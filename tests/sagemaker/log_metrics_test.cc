// MetricDefinitions on a job's log: whole lines only, values carried
// forward, steps per matching line, Cairn's attempt header skipped, a log
// replaced by a link read as nothing.
#include "sagemaker/log_metrics.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "jobs/job_logs.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

class LogMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / "log_metrics_test";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    log_ = (dir_ / "job.log").string();
    Append("=== attempt 1\n");
    auto* def = algorithm_.add_metric_definitions();
    def->set_name("validation:loss");
    def->set_regex("val_loss=([0-9.]+)");
    def = algorithm_.add_metric_definitions();
    def->set_name("train:loss");
    def->set_regex("loss: ([0-9.]+)");
  }
  void Append(const std::string& text) {
    std::ofstream(log_, std::ios::app) << text;
  }
  fs::path dir_;
  std::string log_;
  cairn::v1::SageMakerAlgorithmSpecification algorithm_;
};

TEST_F(LogMetricsTest, MatchesWholeLinesAndCarriesValuesForward) {
  absl::StatusOr<LogMetrics> watch =
      LogMetrics::Create(algorithm_, log_, fs::file_size(log_));
  ASSERT_TRUE(watch.ok()) << watch.status();
  Append("loss: 2.5\nnothing here\nval_lo");
  std::vector<jobs::HypertuneEntry> got = watch->Poll(10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].global_step, 1);
  EXPECT_EQ(got[0].timestamp, 10);
  EXPECT_EQ(got[0].metrics,
            (std::map<std::string, double>{{"train_loss", 2.5}}));
  Append("ss=0.75\n");
  got = watch->Poll(11);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].global_step, 2);
  EXPECT_EQ(got[0].metrics,
            (std::map<std::string, double>{{"train_loss", 2.5},
                                           {"validation_loss", 0.75}}));
  EXPECT_TRUE(watch->Poll(12).empty());
}

TEST_F(LogMetricsTest, SkipsOverlongLinesAndLinks) {
  absl::StatusOr<LogMetrics> watch = LogMetrics::Create(algorithm_, log_, 0);
  ASSERT_TRUE(watch.ok());
  Append(std::string(70 << 10, 'x') + "loss: 1\nloss: 3\n");
  std::vector<jobs::HypertuneEntry> got = watch->Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].metrics.at("train_loss"), 3);
  fs::remove(log_);
  std::ofstream(dir_ / "other") << "loss: 9\n";
  fs::create_symlink(dir_ / "other", log_);
  EXPECT_TRUE(LogMetrics::Create(algorithm_, log_, 0)->Poll(2).empty());
}

TEST_F(LogMetricsTest, IgnoresCairnsAttemptHeader) {
  absl::StatusOr<LogMetrics> watch = LogMetrics::Create(algorithm_, log_, 0);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(jobs::AppendAttemptHeader(log_, "studies/1/trials/1", 1, false,
                                        absl::Now(), {"train", "loss: 7"})
                  .ok());
  Append("loss: 3\n");
  std::vector<jobs::HypertuneEntry> got = watch->Poll(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].metrics.at("train_loss"), 3);
}

TEST_F(LogMetricsTest, RefusesARegexWithoutGroup) {
  algorithm_.mutable_metric_definitions(0)->set_regex("val_loss");
  EXPECT_EQ(LogMetrics::Create(algorithm_, log_, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::sagemaker
