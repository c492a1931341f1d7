// FailureLimitReached: the explicit max_failed_trials and the default
// criterion of job studies (first 3 trials failed; max(10, max_trials/4)).
#include "trials/failure_policy.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;

StudySpec JobSpec(int max_trials) {
  StudySpec spec;
  spec.set_max_trials(max_trials);
  spec.mutable_job_template()->add_command("/bin/train");
  return spec;
}

// Trials 1..n with the given states.
void Fill(TrialTable& table, const std::vector<Trial::State>& states) {
  int64_t id = 0;
  for (Trial::State s : states) {
    Trial t;
    t.set_id(++id);
    t.set_state(s);
    table.Put(t);
  }
}

constexpr Trial::State kF = Trial::FAILED;
constexpr Trial::State kS = Trial::SUCCEEDED;
constexpr Trial::State kA = Trial::ACTIVE;

TEST(FailurePolicyTest, JobStudyFailsWhenItsFirstThreeTrialsFailed) {
  TrialTable table;
  std::string reason;
  Fill(table, {kF, kF, kA});
  EXPECT_FALSE(FailureLimitReached(JobSpec(0), table, &reason));
  table.Put([] {
    Trial t;
    t.set_id(3);
    t.set_state(Trial::FAILED);
    return t;
  }());
  ASSERT_TRUE(FailureLimitReached(JobSpec(0), table, &reason));
  EXPECT_EQ(reason, "the first 3 trials all failed (default failure policy)");
}

TEST(FailurePolicyTest, ASuccessAmongTheFirstThreeDefersToTheCount) {
  TrialTable table;
  std::string reason;
  Fill(table, {kS, kF, kF, kF, kF, kF, kF, kF, kF, kF});  // 9 failed.
  EXPECT_FALSE(FailureLimitReached(JobSpec(0), table, &reason));
  Fill(table, {kS, kF, kF, kF, kF, kF, kF, kF, kF, kF, kF});  // 10 failed.
  ASSERT_TRUE(FailureLimitReached(JobSpec(0), table, &reason));
  EXPECT_EQ(reason,
            "10 trials failed (default failure policy: 10 = max(10, "
            "max_trials/4))");
}

TEST(FailurePolicyTest, LimitIsAQuarterOfMaxTrialsWhenThatIsMore) {
  std::vector<Trial::State> states = {kS};
  for (int i = 0; i < 24; ++i) states.push_back(kF);
  TrialTable table;
  std::string reason;
  Fill(table, states);  // 24 failed; limit max(10, 100/4) = 25.
  EXPECT_FALSE(FailureLimitReached(JobSpec(100), table, &reason));
  states.push_back(kF);
  Fill(table, states);
  ASSERT_TRUE(FailureLimitReached(JobSpec(100), table, &reason));
  EXPECT_NE(reason.find("25 = max(10, max_trials/4)"), std::string::npos)
      << reason;
  // max_trials 20: max(10, 5) = 10.
  EXPECT_TRUE(FailureLimitReached(JobSpec(20), table, &reason));
}

TEST(FailurePolicyTest, ExplicitMaxFailedTrialsReplacesTheDefault) {
  StudySpec spec = JobSpec(0);
  spec.set_max_failed_trials(5);
  TrialTable table;
  std::string reason;
  Fill(table, {kF, kF, kF, kF});
  EXPECT_FALSE(FailureLimitReached(spec, table, &reason));
  Fill(table, {kF, kF, kF, kF, kF});
  ASSERT_TRUE(FailureLimitReached(spec, table, &reason));
  EXPECT_EQ(reason, "max_failed_trials (5) reached");
}

TEST(FailurePolicyTest, StudiesWithoutAJobCommandHaveNoDefault) {
  StudySpec spec;  // Clients run the trials.
  std::vector<Trial::State> states(20, kF);
  TrialTable table;
  std::string reason;
  Fill(table, states);
  EXPECT_FALSE(FailureLimitReached(spec, table, &reason));
}

}  // namespace
}  // namespace cairn
