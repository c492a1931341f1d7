// IsPendingState: exactly REQUESTED, ACTIVE and STOPPING have no result yet.
#include "proto/cairn/v1/trial_states.h"

#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::Trial;

TEST(TrialStatesTest, PendingAreRequestedActiveAndStopping) {
  EXPECT_TRUE(IsPendingState(Trial::REQUESTED));
  EXPECT_TRUE(IsPendingState(Trial::ACTIVE));
  EXPECT_TRUE(IsPendingState(Trial::STOPPING));
}

TEST(TrialStatesTest, FinishedAndUnspecifiedAreNotPending) {
  EXPECT_FALSE(IsPendingState(Trial::SUCCEEDED));
  EXPECT_FALSE(IsPendingState(Trial::INFEASIBLE));
  EXPECT_FALSE(IsPendingState(Trial::FAILED));
  EXPECT_FALSE(IsPendingState(Trial::CANCELLED));
  EXPECT_FALSE(IsPendingState(Trial::STATE_UNSPECIFIED));
}

}  // namespace
}  // namespace cairn
