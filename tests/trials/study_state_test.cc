// StudyState and LockedStudy on a real RocksDB store in a temp dir: the lock
// excludes other threads and records the study's latest write on release;
// FindTrial / FindPendingTrial / WriteTrial keep their error messages.
#include "trials/study_state.h"

#include <atomic>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Trial;

Trial MakeTrial(int64_t id, Trial::State state) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  return t;
}

class StudyStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open(StoreOptions(), dir_.path());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    cairn::v1::Study study;
    study.set_display_name("s");
    auto id = store_->CreateStudy(study);
    ASSERT_TRUE(id.ok()) << id.status();
    state_ = std::make_unique<StudyState>(*id);
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyState> state_;
};

TEST_F(StudyStateTest, LockedStudyRecordsNoWriteWhenNoneWasQueued) {
  WriteScope scope;
  {
    LockedStudy lock(*state_, &scope);
    EXPECT_EQ(state_->View().trial_count(), 0);
  }
  EXPECT_TRUE(scope.pending.empty());
  EXPECT_FALSE(scope.wrote);
}

TEST_F(StudyStateTest, LockedStudyRecordsTheLatestWriteOnRelease) {
  StudyState& st = *state_;
  WriteScope scope;
  {
    LockedStudy lock(st, &scope);
    ASSERT_TRUE(
        st.WriteTrial(store_.get(), MakeTrial(1, Trial::ACTIVE), &scope).ok());
    EXPECT_TRUE(scope.wrote);
    EXPECT_TRUE(scope.pending.empty());  // Recorded only on release.
    EXPECT_EQ(st.trials.size(), 1u);
  }
  ASSERT_EQ(scope.pending.size(), 1u);
  EXPECT_TRUE(store_->Await(scope.pending[0]).ok());

  // A reader after the writer picks up the same write to await.
  WriteScope reader;
  { LockedStudy lock(st, &reader); }
  ASSERT_EQ(reader.pending.size(), 1u);
  EXPECT_EQ(reader.pending[0], scope.pending[0]);
  EXPECT_FALSE(reader.wrote);
}

TEST_F(StudyStateTest, LockedStudyExcludesOtherThreads) {
  StudyState& st = *state_;
  std::atomic<bool> locked_elsewhere{false};
  WriteScope scope;
  {
    LockedStudy lock(st, &scope);
    std::thread other([&] {
      if (st.mu.TryLock()) {
        locked_elsewhere = true;
        st.mu.Unlock();
      }
    });
    other.join();
  }
  EXPECT_FALSE(locked_elsewhere);
  std::thread after([&] {
    WriteScope mine;
    LockedStudy lock(st, &mine);
    locked_elsewhere = true;
  });
  after.join();
  EXPECT_TRUE(locked_elsewhere);
}

TEST_F(StudyStateTest, FindTrialAndFindPendingTrial) {
  StudyState& st = *state_;
  absl::MutexLock lock(&st.mu);
  st.trials.Put(MakeTrial(1, Trial::ACTIVE));
  st.trials.Put(MakeTrial(2, Trial::SUCCEEDED));

  auto missing = st.FindTrial(3, "studies/1/trials/3");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "trial studies/1/trials/3 not found");

  auto active = st.FindPendingTrial(1, "studies/1/trials/1");
  ASSERT_TRUE(active.ok());
  EXPECT_EQ((*active)->id(), 1);

  auto done = st.FindPendingTrial(2, "studies/1/trials/2");
  EXPECT_EQ(done.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(done.status().message(),
            "trial studies/1/trials/2 is already SUCCEEDED");
  EXPECT_TRUE(st.FindTrial(2, "studies/1/trials/2").ok());
}

}  // namespace
}  // namespace cairn
