// The StudyManager holds no mutex while a study's creation or deletion is
// made durable: with the store's WAL fsync stalled by the fault-injection
// file system, a GetStudy of another study is answered meanwhile.
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/fault_file_system.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace cairn {
namespace {

using cairn::v1::Study;

// How long a GetStudy may take while another study's write is stalled. A
// call that waits for that write waits until the test releases it, after
// this long.
constexpr std::chrono::seconds kAnswerWithin(5);

Study NamedStudy(const std::string& display_name) {
  Study study;
  study.set_display_name(display_name);
  *study.mutable_spec() = testing::BraninSpec();
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  return study;
}

class StudyWriteStallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.wrap_file_system = testing::FaultFileSystem::Hook(&fs_);
    ASSERT_NO_FATAL_FAILURE(testing::OpenStoreAndManager(
        dir_.path(), options, StudyManagerOptions(), &store_, &manager_));
    auto existing = manager_->CreateStudy(NamedStudy("existing"));
    ASSERT_TRUE(existing.ok()) << existing.status();
    existing_ = existing->name();
  }

  // Runs `write` with the WAL's fsyncs stalled and expects a GetStudy of the
  // existing study to be answered while `write` waits in its fsync. The
  // stall is released before anything is asserted, so a GetStudy that waits
  // for the write fails the test instead of hanging it.
  void ExpectGetStudyAnsweredDuring(std::function<absl::Status()> write) {
    fs_->StallSyncs(testing::kWalFile);
    std::future<absl::Status> written =
        std::async(std::launch::async, std::move(write));
    const bool stalled = fs_->AwaitStalledSync(absl::Seconds(10));
    std::future<absl::StatusOr<Study>> got = std::async(
        std::launch::async, [this] { return manager_->GetStudy(existing_); });
    const bool answered =
        got.wait_for(kAnswerWithin) == std::future_status::ready;
    const bool write_was_stalled =
        written.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
    fs_->ReleaseSyncs();

    EXPECT_TRUE(stalled) << "the write never reached its fsync";
    EXPECT_TRUE(answered) << "GetStudy waited for another study's write";
    EXPECT_TRUE(write_was_stalled) << "the write was not stalled meanwhile";
    absl::StatusOr<Study> study = got.get();
    ASSERT_TRUE(study.ok()) << study.status();
    EXPECT_EQ(study->display_name(), "existing");
    const absl::Status status = written.get();
    EXPECT_TRUE(status.ok()) << status;
  }

  testing::TempDir dir_;
  std::shared_ptr<testing::FaultFileSystem> fs_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
  std::string existing_;
};

TEST_F(StudyWriteStallTest, GetStudyIsAnsweredWhileCreateStudyWrites) {
  std::string created;
  ExpectGetStudyAnsweredDuring([&] {
    absl::StatusOr<Study> study = manager_->CreateStudy(NamedStudy("new"));
    if (study.ok()) created = study->name();
    return study.status();
  });
  absl::StatusOr<Study> study = manager_->GetStudy(created);
  ASSERT_TRUE(study.ok()) << study.status();
  EXPECT_EQ(study->display_name(), "new");
  EXPECT_EQ(manager_->num_studies(), 2);
}

TEST_F(StudyWriteStallTest, GetStudyIsAnsweredWhileDeleteStudyWrites) {
  auto doomed = manager_->CreateStudy(NamedStudy("doomed"));
  ASSERT_TRUE(doomed.ok()) << doomed.status();
  ExpectGetStudyAnsweredDuring(
      [&] { return manager_->DeleteStudy(doomed->name()); });
  EXPECT_EQ(manager_->GetStudy(doomed->name()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->num_studies(), 1);
}

}  // namespace
}  // namespace cairn
