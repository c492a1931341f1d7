// A new study's spec records its defaults (api/study_defaults.h): an unset
// algorithm is stored as the GP bandit that runs, an unset seed as a random
// one that survives a restart, so runs differ and any run can be replayed.
#include "api/study_defaults.h"

#include "gtest/gtest.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::StudySpec;

class StudyDefaultsTest : public testing::StudyManagerFixture {
 protected:
  Study Create(const std::string& name, StudySpec::Algorithm algorithm,
               int64_t seed) {
    Study study;
    study.set_display_name(name);
    *study.mutable_spec() = testing::BraninSpec();
    study.mutable_spec()->set_algorithm(algorithm);
    study.mutable_spec()->set_seed(seed);
    absl::StatusOr<Study> created = manager_->CreateStudy(study);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.value_or(Study());
  }
  // The parameters of the study's first suggestion, as text.
  std::string FirstSuggestion(const Study& study) {
    auto r = manager_->SuggestTrials(study.name(), 1, "");
    EXPECT_TRUE(r.ok() && r->trials.size() == 1u) << r.status();
    std::string text;
    for (const auto& p : r->trials[0].parameters()) {
      text += p.parameter_id() + "=" + p.value().DebugString();
    }
    return text;
  }
};

TEST_F(StudyDefaultsTest, UnsetAlgorithmAndSeedAreRecorded) {
  const Study a = Create("a", StudySpec::ALGORITHM_UNSPECIFIED, 0);
  EXPECT_EQ(a.spec().algorithm(), StudySpec::GP_BANDIT);
  EXPECT_NE(a.spec().seed(), 0);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  auto stored = manager_->GetStudy(a.name());
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->spec().algorithm(), StudySpec::GP_BANDIT);
  EXPECT_EQ(stored->spec().seed(), a.spec().seed());
  // A seed that was given is kept.
  EXPECT_EQ(Create("b", StudySpec::RANDOM_SEARCH, 42).spec().seed(), 42);
}

TEST_F(StudyDefaultsTest, RunsWithoutASeedDifferAndReplayFromTheRecord) {
  const Study first = Create("first", StudySpec::RANDOM_SEARCH, 0);
  const Study second = Create("second", StudySpec::RANDOM_SEARCH, 0);
  EXPECT_NE(first.spec().seed(), second.spec().seed());
  const std::string suggested = FirstSuggestion(first);
  EXPECT_NE(suggested, FirstSuggestion(second));
  const Study replay =
      Create("replay", StudySpec::RANDOM_SEARCH, first.spec().seed());
  EXPECT_EQ(FirstSuggestion(replay), suggested);
}

TEST_F(StudyDefaultsTest, OlderStoredStudyReadsAsTheAlgorithmThatRuns) {
  Study old;  // As a store from before the defaults were recorded has it.
  old.set_display_name("old");
  old.set_state(Study::ACTIVE);
  *old.mutable_spec() = testing::BraninSpec();
  old.mutable_spec()->set_algorithm(StudySpec::ALGORITHM_UNSPECIFIED);
  absl::StatusOr<int64_t> id = store_->CreateStudy(old);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  auto loaded = manager_->LookupStudy("old");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->spec().algorithm(), StudySpec::GP_BANDIT);
  EXPECT_EQ(loaded->spec().seed(), 0);  // Seed 0 is what it ran with.
}

TEST(ApplyStudyDefaultsTest, OnlyUnsetFieldsChange) {
  StudySpec spec;
  api::ApplyStudyDefaults(9, spec);
  EXPECT_EQ(spec.algorithm(), api::kDefaultAlgorithm);
  EXPECT_EQ(spec.seed(), 9);
  spec.set_algorithm(StudySpec::GRID_SEARCH);
  api::ApplyStudyDefaults(10, spec);
  EXPECT_EQ(spec.algorithm(), StudySpec::GRID_SEARCH);
  EXPECT_EQ(spec.seed(), 9);
  EXPECT_GE(api::NewRandomSeed(), 1);
}

}  // namespace
}  // namespace cairn
