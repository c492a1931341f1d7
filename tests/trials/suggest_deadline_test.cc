// GP_BANDIT suggestions past their deadline (cairnd --gp-suggest-deadline):
// the trials come from the quasi-random fallback, say so in their
// suggestion_kind metadata, and are reported to the observer (Prometheus's
// cairn_suggestion_deadline_fallbacks_total). A deadline already past when
// the designer waits (1 ns) makes every model-based suggestion miss it, so
// nothing here depends on timing.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/counting_observer.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/observer.h"
#include "trials/study_manager.h"
#include "tuner/designer.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;

using testing::CountingObserver;

// Runs 9 sequential suggest/complete rounds on a 2-D GP_BANDIT study
// (5 initial-design trials, then the model) whose designers have
// `deadline_seconds`; returns each trial's suggestion_kind.
std::vector<std::string> Kinds(double deadline_seconds,
                               CountingObserver* observer) {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<StudyManager> manager;
  StudyManagerOptions options;
  options.observer = observer;
  tuner::DesignerOptions designers;
  designers.gp_suggest_deadline_seconds = deadline_seconds;
  options.create_designer = [designers](const cairn::v1::StudySpec& spec) {
    return tuner::CreateDesigner(spec, designers);
  };
  testing::OpenStoreAndManager(dir.path(), StoreOptions(), options, &store,
                               &manager);
  Study study;
  study.set_display_name("deadline");
  *study.mutable_spec() = testing::BraninSpec();
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::GP_BANDIT);
  study.mutable_spec()->set_seed(5);
  auto created = manager->CreateStudy(study);
  EXPECT_TRUE(created.ok()) << created.status();
  std::vector<std::string> kinds;
  for (int i = 0; created.ok() && i < 9; ++i) {
    auto suggested = manager->SuggestTrials(created->name(), 1, "w");
    EXPECT_TRUE(suggested.ok()) << suggested.status();
    if (!suggested.ok() || suggested->trials.size() != 1) break;
    const Trial& t = suggested->trials[0];
    kinds.push_back(t.metadata().at("suggestion_kind"));
    EXPECT_TRUE(
        manager->CompleteTrial(t.name(), testing::Loss(1.0 + i), false, "")
            .ok());
  }
  return kinds;
}

TEST(SuggestDeadlineTest, MissedDeadlinesAreRecordedAndCounted) {
  CountingObserver observer;
  const std::vector<std::string> kinds = Kinds(1e-9, &observer);
  ASSERT_EQ(kinds.size(), 9u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(kinds[i], "quasi_random") << i;
  for (int i = 5; i < 9; ++i) EXPECT_EQ(kinds[i], "quasi_random_deadline");
  EXPECT_EQ(observer.suggested(), 9);
  EXPECT_EQ(observer.fallbacks(), 4);
}

TEST(SuggestDeadlineTest, WithoutADeadlineTheModelSuggests) {
  CountingObserver observer;
  const std::vector<std::string> kinds = Kinds(0, &observer);
  ASSERT_EQ(kinds.size(), 9u);
  for (int i = 5; i < 9; ++i) EXPECT_NE(kinds[i], "quasi_random_deadline");
  EXPECT_EQ(observer.fallbacks(), 0);
}

}  // namespace
}  // namespace cairn
