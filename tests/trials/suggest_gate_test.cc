// SuggestTrials runs its designer outside the study's lock: calls on the
// study proceed while a (deliberately blocked) designer computes, concurrent
// suggestions of one study are coalesced, and the commit applies to the
// study as it is after the designer returns.
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/latched_designer.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"
#include "tuner/designer.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;

using testing::Latch;
using testing::LatchedDesigner;

Study RandomStudy(int max_trials) {
  Study study;
  study.set_display_name("gate");
  *study.mutable_spec() = testing::BraninSpec();
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  study.mutable_spec()->set_seed(3);
  study.mutable_spec()->set_max_trials(max_trials);
  return study;
}

class SuggestGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StudyManagerOptions options;
    options.create_designer = [this](const cairn::v1::StudySpec& spec)
        -> absl::StatusOr<std::unique_ptr<tuner::Designer>> {
      auto inner = tuner::CreateDesigner(spec);
      if (!inner.ok()) return inner.status();
      return std::make_unique<LatchedDesigner>(*std::move(inner), &latch_);
    };
    ASSERT_NO_FATAL_FAILURE(testing::OpenStoreAndManager(
        dir_.path(), StoreOptions(), options, &store_, &manager_));
  }
  void TearDown() override { latch_.Open(); }

  Latch latch_;
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
};

TEST_F(SuggestGateTest, StudyCallsProceedWhileTheDesignerComputes) {
  auto study = manager_->CreateStudy(RandomStudy(3));
  ASSERT_TRUE(study.ok()) << study.status();
  auto suggested = std::async(std::launch::async, [&] {
    return manager_->SuggestTrials(study->name(), 3, "a");
  });
  ASSERT_TRUE(latch_.AwaitEntered(1));
  // With the designer blocked: read the study, add and complete a manual
  // trial (it takes one of the 3 max_trials), list the trials.
  auto calls = std::async(std::launch::async, [&]() -> std::string {
    if (!manager_->GetStudy(study->name()).ok()) return "GetStudy failed";
    auto created =
        manager_->CreateTrial(study->name(), testing::BraninTrial(2.0, 2.0));
    if (!created.ok()) return created.status().ToString();
    auto done = manager_->CompleteTrial(created->name(), testing::Loss(4.0, 1),
                                        false, "");
    if (!done.ok()) return done.status().ToString();
    auto page = manager_->ListTrials(study->name(), 0, "", false);
    if (!page.ok() || page->trials.size() != 1) return "ListTrials";
    return "";
  });
  const bool proceeded =
      calls.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  latch_.Open();
  ASSERT_TRUE(proceeded) << "calls on the study waited for the designer";
  EXPECT_EQ(calls.get(), "");

  // The commit saw the manual trial: only 2 of the 3 asked fit, numbered
  // after it.
  absl::StatusOr<SuggestResult> result = suggested.get();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->trials.size(), 2u);
  EXPECT_EQ(result->trials[0].id(), 2);
  EXPECT_EQ(result->trials[1].id(), 3);
  EXPECT_NE(result->message.find("max_trials"), std::string::npos)
      << result->message;
  auto got = manager_->GetStudy(study->name());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->trial_count(), 3);
  EXPECT_EQ(latch_.entered(), 1);
}

TEST_F(SuggestGateTest, ConcurrentSuggestionsAreCoalesced) {
  auto study = manager_->CreateStudy(RandomStudy(20));
  ASSERT_TRUE(study.ok()) << study.status();
  std::vector<std::future<absl::StatusOr<SuggestResult>>> calls;
  for (const char* client : {"w", "w", "v"}) {
    calls.push_back(std::async(std::launch::async, [&, client] {
      return manager_->SuggestTrials(study->name(), 2, client);
    }));
  }
  ASSERT_TRUE(latch_.AwaitEntered(1));
  // The other two wait at the study's gate, not in the designer.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(latch_.entered(), 1);
  latch_.Open();
  std::vector<SuggestResult> results;
  for (auto& call : calls) {
    absl::StatusOr<SuggestResult> r = call.get();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 2u);
    results.push_back(*std::move(r));
  }
  // Client "w" asked twice and got the same trials; "v" got others. One
  // designer run per client, never one per request.
  EXPECT_EQ(results[0].trials[0].id(), results[1].trials[0].id());
  EXPECT_EQ(results[0].trials[1].id(), results[1].trials[1].id());
  EXPECT_EQ(latch_.entered(), 2);
  std::set<int64_t> ids;
  std::set<std::string> points;
  for (const SuggestResult& r : results) {
    for (const Trial& t : r.trials) {
      ids.insert(t.id());
      points.insert(t.parameters(0).DebugString() +
                    t.parameters(1).DebugString());
    }
  }
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(points.size(), 4u) << "a point was suggested twice";
  auto got = manager_->GetStudy(study->name());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->trial_count(), 4);
}

TEST_F(SuggestGateTest, AStudyStoppedMeanwhileTakesNoSuggestion) {
  auto study = manager_->CreateStudy(RandomStudy(10));
  ASSERT_TRUE(study.ok()) << study.status();
  auto suggested = std::async(std::launch::async, [&] {
    return manager_->SuggestTrials(study->name(), 2, "a");
  });
  ASSERT_TRUE(latch_.AwaitEntered(1));
  auto stopped = std::async(std::launch::async, [&] {
    return manager_->SetStudyState(study->name(), Study::INACTIVE);
  });
  const bool proceeded =
      stopped.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  latch_.Open();
  ASSERT_TRUE(proceeded) << "stopping the study waited for the designer";
  ASSERT_TRUE(stopped.get().ok());
  absl::StatusOr<SuggestResult> result = suggested.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->trials.empty());
  EXPECT_EQ(result->study_state, Study::INACTIVE);
  auto got = manager_->GetStudy(study->name());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->trial_count(), 0);
}

}  // namespace
}  // namespace cairn
