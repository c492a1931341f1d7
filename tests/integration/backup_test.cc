// `cairn backup DEST` against a real cairnd while gRPC clients keep writing:
// a second cairnd on DEST serves every trial and measurement acknowledged
// before the command started; bad destinations fail with a clear error and a
// non-zero exit.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using testing::CairndProcess;
using testing::CommandResult;
using ::testing::HasSubstr;
using testing::RunCommand;

constexpr int kWriters = 3;
constexpr int kMeasurementsPerTrial = 2;

// Trial name -> measurements acknowledged, for every acknowledged trial.
using Acked = std::vector<std::pair<std::string, int>>;

class BackupEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = tmp_.path() + "/data";
    server_ = std::make_unique<CairndProcess>(data_dir_);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name("backup-e2e");
    *req.mutable_study()->mutable_spec() = testing::BraninSpec();
    req.mutable_study()->mutable_spec()->set_algorithm(
        cairn::v1::StudySpec::RANDOM_SEARCH);
    grpc::ClientContext ctx;
    cairn::v1::Study study;
    grpc::Status s = server_->NewStub()->CreateStudy(&ctx, req, &study);
    ASSERT_TRUE(s.ok()) << s.error_message();
    study_ = study.name();
    absl::MutexLock lock(&mu_);
    acked_.resize(kWriters);
  }

  // Writer `w`: CreateTrial, then kMeasurementsPerTrial AddTrialMeasurement
  // calls, recording each acknowledged write, until stop_.
  void Write(int w) {
    std::unique_ptr<cairn::v1::StudyService::Stub> stub = server_->NewStub();
    for (int i = 0; !stop_.load(); ++i) {
      cairn::v1::CreateTrialRequest req;
      req.set_parent(study_);
      for (const char* x : {"x1", "x2"}) {
        cairn::v1::Parameter* p = req.mutable_trial()->add_parameters();
        p->set_parameter_id(x);
        p->mutable_value()->set_number_value(w + 0.001 * i);
      }
      grpc::ClientContext ctx;
      cairn::v1::Trial trial;
      grpc::Status s = stub->CreateTrial(&ctx, req, &trial);
      if (s.ok()) Ack(w, trial.name(), 0);
      for (int step = 0; s.ok() && step < kMeasurementsPerTrial; ++step) {
        cairn::v1::AddTrialMeasurementRequest m;
        m.set_trial_name(trial.name());
        *m.mutable_measurement() = testing::Loss(1.0 / (step + 1), step);
        grpc::ClientContext mctx;
        s = stub->AddTrialMeasurement(&mctx, m, &trial);
        if (s.ok()) Ack(w, trial.name(), step + 1);
      }
      if (!s.ok()) {
        absl::MutexLock lock(&mu_);
        errors_.push_back(s.error_message());
        return;
      }
    }
  }

  void Ack(int w, const std::string& trial, int measurements) {
    absl::MutexLock lock(&mu_);
    if (measurements == 0) {
      acked_[w].emplace_back(trial, 0);
    } else {
      acked_[w].back().second = measurements;
    }
    ++acks_;
  }

  // Waits until at least `n` writes were acknowledged in all.
  bool AwaitAcks(int64_t n) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return acks_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(20));
  }

  CommandResult Cairn(std::vector<std::string> args) {
    std::vector<std::string> argv = {testing::BinDir() + "/cairn", "--server",
                                     server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  testing::TempDir tmp_;
  std::string data_dir_;
  std::unique_ptr<CairndProcess> server_;
  std::string study_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::vector<Acked> acked_ ABSL_GUARDED_BY(mu_);
  int64_t acks_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
};

TEST_F(BackupEndToEndTest, SecondCairndOnBackupServesEveryAcknowledgedTrial) {
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([this, w] { Write(w); });
  }
  ASSERT_TRUE(AwaitAcks(300));
  std::vector<Acked> before;
  int64_t acks_before = 0;
  {
    absl::MutexLock lock(&mu_);
    before = acked_;
    acks_before = acks_;
  }
  const std::string dest = tmp_.path() + "/backup";
  const CommandResult backup = Cairn({"backup", dest});
  // The live cairnd keeps serving writes after the backup.
  const bool writes_after = AwaitAcks(acks_before + 100);
  stop_ = true;
  for (std::thread& t : writers) t.join();
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  EXPECT_THAT(backup.out, HasSubstr("backup written to " + dest));
  EXPECT_THAT(backup.out, HasSubstr("studies 1, trials "));
  EXPECT_TRUE(writes_after);
  {
    absl::MutexLock lock(&mu_);
    EXPECT_TRUE(errors_.empty()) << errors_.front();
  }
  std::cout << backup.out;

  CairndProcess restored(dest);
  std::string error;
  ASSERT_TRUE(restored.Start(&error)) << error;
  // The backup holds the tokens (their hashes): the admin's token works.
  restored.set_token(server_->token());
  std::unique_ptr<cairn::v1::StudyService::Stub> stub = restored.NewStub();
  int64_t checked = 0;
  for (const Acked& acked : before) {
    for (const auto& [name, measurements] : acked) {
      cairn::v1::GetTrialRequest req;
      req.set_name(name);
      cairn::v1::Trial trial;
      grpc::ClientContext ctx;
      grpc::Status s = stub->GetTrial(&ctx, req, &trial);
      ASSERT_TRUE(s.ok()) << name << ": " << s.error_message();
      ASSERT_GE(trial.measurements_size(), measurements) << name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 300 / (kMeasurementsPerTrial + 1));
}

TEST_F(BackupEndToEndTest, BadDestinationIsAClearErrorAndNonZeroExit) {
  const std::string full = tmp_.path() + "/full";
  fs::create_directories(full + "/x");
  struct Case {
    std::string dest;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {full, "FAILED_PRECONDITION: backup destination '" + full +
                 "' is a non-empty directory"},
      {data_dir_ + "/b", "INVALID_ARGUMENT: backup destination '" + data_dir_ +
                             "/b' is inside the data dir"},
      {"backups/../x",
       "INVALID_ARGUMENT: backup destination 'backups/../x' "
       "must be an absolute path"},
  };
  for (const Case& c : cases) {
    const CommandResult r = Cairn({"backup", c.dest});
    EXPECT_EQ(r.exit_code, 1) << c.dest;
    EXPECT_THAT(r.err, HasSubstr(c.expected)) << c.dest;
    EXPECT_LT(r.err.size(), 1024u) << c.dest;
  }
  const CommandResult missing = Cairn({"backup"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("DEST"));
  EXPECT_FALSE(fs::exists(data_dir_ + "/b"));
}

}  // namespace
}  // namespace cairn
