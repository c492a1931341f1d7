// api::IsPendingState: exactly REQUESTED, ACTIVE and STOPPING have no result
// yet.
#include "api/trial_states.h"

#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::Trial;

TEST(TrialStatesTest, PendingAreRequestedActiveAndStopping) {
  EXPECT_TRUE(api::IsPendingState(Trial::REQUESTED));
  EXPECT_TRUE(api::IsPendingState(Trial::ACTIVE));
  EXPECT_TRUE(api::IsPendingState(Trial::STOPPING));
}

TEST(TrialStatesTest, FinishedAndUnspecifiedAreNotPending) {
  EXPECT_FALSE(api::IsPendingState(Trial::SUCCEEDED));
  EXPECT_FALSE(api::IsPendingState(Trial::INFEASIBLE));
  EXPECT_FALSE(api::IsPendingState(Trial::FAILED));
  EXPECT_FALSE(api::IsPendingState(Trial::CANCELLED));
  EXPECT_FALSE(api::IsPendingState(Trial::STATE_UNSPECIFIED));
}

}  // namespace
}  // namespace cairn
