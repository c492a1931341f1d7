// The study controller with a GP suggest pool (StudyManagerOptions::
// gp_workers): GP_BANDIT calls of one study waiting together share one
// designer run (distinct trials, a repeated client_id still gets its own
// trial back), other calls never wait behind a GP computation, and a call
// still queued at the deadline gets a quasi-random trial that says so and
// is counted. GP_BANDIT designers wait at a latch the test opens, so the
// queues fill deterministically.
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/resource_names.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/counting_observer.h"
#include "tests/testing/latched_designer.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/observer.h"
#include "trials/study_manager.h"
#include "tuner/designer.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

using testing::CountingObserver;

class GpSuggestPoolTest : public ::testing::Test {
 protected:
  void Open(double queue_deadline_seconds) {
    StudyManagerOptions options;
    options.observer = &observer_;
    options.gp_workers = 1;
    options.gp_queue_deadline_seconds = queue_deadline_seconds;
    options.create_designer = [this](const StudySpec& spec)
        -> absl::StatusOr<std::unique_ptr<tuner::Designer>> {
      auto inner = tuner::CreateDesigner(spec);
      if (!inner.ok() || spec.algorithm() != StudySpec::GP_BANDIT) {
        return inner;
      }
      return std::make_unique<testing::LatchedDesigner>(*std::move(inner),
                                                        &latch_);
    };
    ASSERT_NO_FATAL_FAILURE(testing::OpenStoreAndManager(
        dir_.path(), StoreOptions(), options, &store_, &manager_));
  }
  void TearDown() override { latch_.Open(); }

  std::string NewStudy(const std::string& name, StudySpec::Algorithm algo) {
    Study study;
    study.set_display_name(name);
    *study.mutable_spec() = testing::BraninSpec();
    study.mutable_spec()->set_algorithm(algo);
    study.mutable_spec()->set_seed(7);
    auto created = manager_->CreateStudy(study);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->name() : "";
  }
  std::future<absl::StatusOr<SuggestResult>> Ask(const std::string& study,
                                                 const std::string& client) {
    return std::async(std::launch::async, [this, study, client] {
      return manager_->SuggestTrials(study, 1, client);
    });
  }
  // Waits (up to 10 s) until `n` calls of `study` wait in the pool.
  bool AwaitWaiting(const std::string& study, int n) {
    const int64_t id = *api::ParseStudyName(study, "study");
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (manager_->TEST_GpAsksWaiting(id) != n) {
      if (absl::Now() > give_up) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  CountingObserver observer_;
  testing::Latch latch_;
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
};

TEST_F(GpSuggestPoolTest, WaitingCallsOfOneStudyShareOneDesignerRun) {
  ASSERT_NO_FATAL_FAILURE(Open(0));
  const std::string gp = NewStudy("gp", StudySpec::GP_BANDIT);
  auto first = Ask(gp, "c0");
  ASSERT_TRUE(latch_.AwaitEntered(1));  // c0's run holds the only worker.
  std::vector<std::future<absl::StatusOr<SuggestResult>>> waiting;
  for (const char* client : {"c1", "c2", "c3", "c4", "c5", "c1"}) {
    waiting.push_back(Ask(gp, client));
  }
  ASSERT_TRUE(AwaitWaiting(gp, 6));
  latch_.Open();
  std::set<std::string> names, points;
  std::string c1_trial;
  auto check = [&](absl::StatusOr<SuggestResult> r, const std::string& who) {
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 1u) << who << ": " << r->message;
    const Trial& t = r->trials[0];
    EXPECT_EQ(t.client_id(), who);
    if (who == "c1" && !c1_trial.empty()) {
      EXPECT_EQ(t.name(), c1_trial);  // The repeated client_id.
      return;
    }
    if (who == "c1") c1_trial = t.name();
    names.insert(t.name());
    points.insert(t.parameters(0).DebugString() +
                  t.parameters(1).DebugString());
  };
  check(first.get(), "c0");
  const char* clients[] = {"c1", "c2", "c3", "c4", "c5", "c1"};
  for (int i = 0; i < 6; ++i) check(waiting[i].get(), clients[i]);
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(points.size(), 6u);
  EXPECT_EQ(latch_.entered(), 2);  // c0's run, then one for the other six.
  EXPECT_EQ(observer_.runs(), 2);
  // Asking again still returns the client's pending trial.
  auto again = manager_->SuggestTrials(gp, 1, "c1");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->trials.size(), 1u);
  EXPECT_EQ(again->trials[0].name(), c1_trial);
}

TEST_F(GpSuggestPoolTest, OtherCallsNeverWaitBehindGpWork) {
  ASSERT_NO_FATAL_FAILURE(Open(0));
  const std::string gp = NewStudy("gp", StudySpec::GP_BANDIT);
  const std::string rs = NewStudy("rs", StudySpec::RANDOM_SEARCH);
  auto running = manager_->CreateTrial(gp, testing::BraninTrial(2.0, 2.0));
  ASSERT_TRUE(running.ok()) << running.status();
  auto blocked = Ask(gp, "blocked");
  ASSERT_TRUE(latch_.AwaitEntered(1));
  // The only GP worker is held: none of these may wait for it.
  auto calls = std::async(std::launch::async, [&]() -> std::string {
    auto other = manager_->SuggestTrials(rs, 2, "r");
    if (!other.ok() || other->trials.size() != 2) return "RANDOM_SEARCH";
    if (!manager_->AddMeasurement(running->name(), testing::Loss(2.0, 1))
             .ok()) {
      return "AddMeasurement";
    }
    if (!manager_->ListTrials(gp, 0, "", false).ok()) return "ListTrials";
    if (!manager_->CompleteTrial(running->name(), testing::Loss(1.5), false, "")
             .ok()) {
      return "CompleteTrial";
    }
    return "";
  });
  const bool proceeded =
      calls.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  latch_.Open();
  ASSERT_TRUE(proceeded) << "calls waited for the GP worker";
  EXPECT_EQ(calls.get(), "");
  EXPECT_TRUE(blocked.get().ok());
}

TEST_F(GpSuggestPoolTest, CallStillQueuedAtTheDeadlineFallsBack) {
  // Long enough for the idle worker to take the first call; the second
  // can only wait it out, since the worker is held until the end.
  ASSERT_NO_FATAL_FAILURE(Open(1.0));
  const std::string held = NewStudy("held", StudySpec::GP_BANDIT);
  const std::string late = NewStudy("late", StudySpec::GP_BANDIT);
  auto first = Ask(held, "a");
  ASSERT_TRUE(latch_.AwaitEntered(1));
  auto answer = manager_->SuggestTrials(late, 1, "b");
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->trials.size(), 1u);
  EXPECT_EQ(answer->trials[0].metadata().at("suggestion_kind"),
            "quasi_random_deadline");
  EXPECT_EQ(observer_.fallbacks(), 1);
  EXPECT_EQ(latch_.entered(), 1);  // `late`'s designer never ran.
  latch_.Open();
  ASSERT_TRUE(first.get().ok());
  // Once the worker is free, the late study's next call runs its designer.
  auto next = manager_->SuggestTrials(late, 1, "c");
  ASSERT_TRUE(next.ok() && next->trials.size() == 1u);
  EXPECT_NE(next->trials[0].metadata().at("suggestion_kind"),
            "quasi_random_deadline");
  EXPECT_EQ(observer_.fallbacks(), 1);
}

}  // namespace
}  // namespace cairn
