// StudyManager::GetMetricHistory (paging, step ranges, downsampling, bad
// input), the bound on GetTrial's and ListTrials' measurements and on the
// size of a ListTrials page, on a real store; CurveDownsampler on its own.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/curve_downsampler.h"
#include "trials/study_manager.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Measurement Point(int64_t step, double value) {
  return testing::Loss(value, step);
}

std::vector<int64_t> Steps(const std::vector<Measurement>& ms) {
  std::vector<int64_t> out;
  for (const Measurement& m : ms) out.push_back(m.step_count());
  return out;
}

// ------------------------------------------------------- CurveDownsampler

std::vector<int64_t> Downsample(const std::vector<double>& values, int max) {
  CurveDownsampler d(static_cast<int64_t>(values.size()), max);
  for (size_t i = 0; i < values.size(); ++i) d.Add(Point(i, values[i]));
  return Steps(d.Finish());
}

TEST(CurveDownsamplerTest, KeepsEndsAndExtremesOfEachRun) {
  // 10 points, max 6: first, last, and 2 runs of 4 interior points each.
  // Run 1 (steps 1-4): min at 3, max at 2. Run 2 (5-8): min at 5, max at 8.
  EXPECT_THAT(Downsample({5, 4, 9, 0, 4, -1, 3, 3, 8, 5}, 6),
              ElementsAre(0, 2, 3, 5, 8, 9));
  // A flat run keeps one point (its first).
  EXPECT_THAT(Downsample({1, 2, 2, 2, 2, 7}, 3), ElementsAre(0, 5));
  EXPECT_THAT(Downsample({1, 2, 2, 2, 2, 7}, 4), ElementsAre(0, 1, 5));
  // Short curves are kept whole.
  EXPECT_THAT(Downsample({3, 1, 2}, 3), ElementsAre(0, 1, 2));
  EXPECT_TRUE(Downsample({}, 2).empty());
}

TEST(CurveDownsamplerTest, NeverExceedsMaxPoints) {
  std::vector<double> values;
  for (int i = 0; i < 1001; ++i) values.push_back((i * 7919) % 101);
  for (int max : {2, 3, 5, 100, 1000}) {
    std::vector<int64_t> steps = Downsample(values, max);
    EXPECT_LE(steps.size(), static_cast<size_t>(max)) << max;
    EXPECT_EQ(steps.front(), 0);
    EXPECT_EQ(steps.back(), 1000);
    EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
  }
}

// ---------------------------------------------------------- StudyManager

class MetricHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(testing::OpenStoreAndManager(
        dir_.path(), StoreOptions(), StudyManagerOptions(), &store_,
        &manager_));
    cairn::v1::Study study;
    study.set_display_name("curves");
    *study.mutable_spec() = testing::BraninSpec();
    auto created = manager_->CreateStudy(study);
    ASSERT_TRUE(created.ok()) << created.status();
    auto r = manager_->SuggestTrials(created->name(), 1, "");
    ASSERT_TRUE(r.ok()) << r.status();
    trial_ = r->trials[0].name();
  }

  // Reports steps 0 .. n-1 with value = step; every third measurement also
  // carries "acc" only (no loss), to be skipped.
  void Report(int n) {
    std::vector<MeasurementReport> reports;
    for (int i = 0; i < n; ++i) {
      reports.push_back({trial_, Point(i, i)});
      if (i % 3 == 0) {
        Measurement acc;
        acc.set_step_count(i);
        auto* metric = acc.add_metrics();
        metric->set_metric_id("acc");
        metric->set_value(0.5);
        reports.push_back({trial_, acc});
      }
    }
    auto written = manager_->AddMeasurements(reports);
    ASSERT_TRUE(written.ok()) << written.status();
  }

  // Every page of `q`, concatenated; counts the pages.
  std::vector<int64_t> ReadAll(MetricHistoryQuery q, int* pages) {
    std::vector<int64_t> steps;
    *pages = 0;
    do {
      auto page = manager_->GetMetricHistory(trial_, q);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      ++*pages;
      for (const Measurement& m : page->points) {
        EXPECT_EQ(m.metrics_size(), 1);
        EXPECT_EQ(m.metrics(0).metric_id(), "loss");
        steps.push_back(m.step_count());
      }
      q.page_token = page->next_page_token;
    } while (!q.page_token.empty());
    return steps;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
  std::string trial_;
};

TEST_F(MetricHistoryTest, PagesThroughTheWholeCurveInOrder) {
  Report(250);
  MetricHistoryQuery q;
  q.metric_id = "loss";
  q.page_size = 100;
  int pages = 0;
  std::vector<int64_t> want;
  for (int i = 0; i < 250; ++i) want.push_back(i);
  EXPECT_EQ(ReadAll(q, &pages), want);
  EXPECT_EQ(pages, 3);
  // Exactly a page's worth: no empty page after it.
  q.page_size = 250;
  EXPECT_EQ(ReadAll(q, &pages), want);
  EXPECT_EQ(pages, 1);
  // The default page size holds it all.
  q.page_size = 0;
  EXPECT_EQ(ReadAll(q, &pages), want);
}

TEST_F(MetricHistoryTest, StepRangeIsInclusive) {
  Report(100);
  MetricHistoryQuery q;
  q.metric_id = "loss";
  q.page_size = 4;
  q.start_step = 10;
  q.end_step = 19;
  int pages = 0;
  EXPECT_THAT(ReadAll(q, &pages),
              ElementsAre(10, 11, 12, 13, 14, 15, 16, 17, 18, 19));
  EXPECT_EQ(pages, 3);
  q.start_step.reset();
  q.end_step = 2;
  EXPECT_THAT(ReadAll(q, &pages), ElementsAre(0, 1, 2));
}

TEST_F(MetricHistoryTest, MaxPointsDownsamplesTheRangeInOnePage) {
  Report(1000);
  MetricHistoryQuery q;
  q.metric_id = "loss";
  q.start_step = 100;
  q.end_step = 899;
  q.max_points = 10;
  auto page = manager_->GetMetricHistory(trial_, q);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->next_page_token, "");
  // A rising curve: each of the 4 runs of 199 or 200 interior points (steps
  // 101-300, 301-499, 500-699, 700-898) keeps its first (min) and last (max).
  EXPECT_THAT(Steps(page->points),
              ElementsAre(100, 101, 300, 301, 499, 500, 699, 700, 898, 899));
}

TEST_F(MetricHistoryTest, BadInputNamesFieldAndValue) {
  Report(3);
  struct Case {
    MetricHistoryQuery q;
    std::string message;
  };
  std::vector<Case> cases(6);
  for (Case& c : cases) c.q.metric_id = "loss";
  cases[0].q.metric_id = "";
  cases[0].message = "metric_id: must not be empty";
  cases[1].q.page_size = 100001;
  cases[1].message = "page_size: 100001 must be 0 or between 1 and 100000";
  cases[2].q.max_points = 1;
  cases[2].message = "max_points: 1 must be 0 or between 2 and 100000";
  cases[3].q.start_step = 5;
  cases[3].q.end_step = 4;
  cases[3].message = "start_step: 5 is after end_step 4";
  cases[4].q.page_token = "x";
  cases[4].message = "page_token: \"x\" is not a valid page token";
  cases[5].q.page_token = std::string(5000, 'y');
  cases[5].message = "is not a valid page token";
  for (const Case& c : cases) {
    auto page = manager_->GetMetricHistory(trial_, c.q);
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(page.status().message(), HasSubstr(c.message));
    EXPECT_LT(page.status().message().size(), 1024u);
  }
}

TEST_F(MetricHistoryTest, GetTrialKeepsTheLastMeasurementsAndSaysSo) {
  // 1,200 loss points and 400 acc-only measurements: 1,600 in all.
  Report(1200);
  auto t = manager_->GetTrial(trial_);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->measurements_size(), cairn::api::kMaxTrialMeasurements);
  EXPECT_TRUE(t->measurements_truncated());
  EXPECT_EQ(t->measurements(t->measurements_size() - 1).step_count(), 1199);
  EXPECT_LE(t->measurements(0).step_count(), t->measurements(1).step_count());
  auto page = manager_->ListTrials(trial_.substr(0, trial_.find("/trials")), 0,
                                   "", true);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->trials.size(), 1u);
  EXPECT_EQ(page->trials[0].measurements_size(),
            cairn::api::kMaxTrialMeasurements);
  EXPECT_TRUE(page->trials[0].measurements_truncated());
}

TEST_F(MetricHistoryTest, ListTrialsPagesStayUnderTheGrpcLimit) {
  // 10 trials of 1,000 measurements of 10 long-named metrics: about 6 MB of
  // trials in all, more than gRPC's 4 MB in one reply.
  const std::string parent = trial_.substr(0, trial_.find("/trials"));
  auto more = manager_->SuggestTrials(parent, 9, "");
  ASSERT_TRUE(more.ok()) << more.status();
  std::vector<std::string> names = {trial_};
  for (const auto& t : more->trials) names.push_back(t.name());
  ASSERT_EQ(names.size(), 10u);
  std::vector<MeasurementReport> reports;
  for (const std::string& name : names) {
    for (int step = 0; step < cairn::api::kMaxTrialMeasurements; ++step) {
      Measurement m;
      m.set_step_count(step);
      for (int k = 0; k < 10; ++k) {
        auto* metric = m.add_metrics();
        metric->set_metric_id(absl::StrCat("validation_metric_number_", k,
                                           "_of_a_long_experiment_name"));
        metric->set_value(step * 0.001 + k);
      }
      reports.push_back({name, std::move(m)});
    }
  }
  ASSERT_TRUE(manager_->AddMeasurements(reports).ok());

  std::vector<int64_t> ids;
  size_t total_bytes = 0;
  int pages = 0;
  std::string token;
  do {
    auto page = manager_->ListTrials(parent, 0, token, true);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    cairn::v1::ListTrialsResponse reply;
    for (const auto& t : page->trials) {
      EXPECT_EQ(t.measurements_size(), cairn::api::kMaxTrialMeasurements);
      EXPECT_FALSE(t.measurements_truncated());
      ids.push_back(t.id());
      *reply.add_trials() = t;
    }
    reply.set_next_page_token(page->next_page_token);
    EXPECT_LE(reply.ByteSizeLong(),
              static_cast<size_t>(cairn::api::kMaxListTrialsBytes));
    total_bytes += reply.ByteSizeLong();
    token = page->next_page_token;
  } while (!token.empty());
  EXPECT_GT(total_bytes, size_t{4} << 20);
  EXPECT_GE(pages, 2);
  EXPECT_THAT(ids, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  // Without measurements the same trials fit in one page.
  auto small = manager_->ListTrials(parent, 0, "", false);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->trials.size(), 10u);
  EXPECT_TRUE(small->next_page_token.empty());
}

TEST_F(MetricHistoryTest, GetTrialWithFewMeasurementsIsNotTruncated) {
  Report(10);
  auto t = manager_->GetTrial(trial_);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->measurements_size(), 14);
  EXPECT_FALSE(t->measurements_truncated());
  EXPECT_EQ(t->measurements(0).step_count(), 0);
}

}  // namespace
}  // namespace cairn
