// `cairn study wait`: the progress line, the in-place terminal printer, the
// reconnect backoff, and end to end a real cairn child waiting on a study
// while its real cairnd is SIGKILLed and restarted on the same data dir and
// port: wait keeps going, prints progress lines, and exits 0 when the study
// completes.

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/study_wait.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/child_process.h"
#include "tests/testing/test_util.h"

namespace cairn::cli {
namespace {

namespace v1 = cairn::v1;
using ::cairn::testing::CairndProcess;
using ::cairn::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StudyWaitFormatTest, ProgressLine) {
  StudyProgress p;
  p.name = "studies/3";
  p.done = 3;
  p.total = 10;
  p.running = 2;
  EXPECT_EQ(FormatStudyProgress(p), "studies/3: 3/10 trials done, 2 running");
  p.total = 0;
  p.failed = 1;
  p.best = "loss 0.4 (trial 2)";
  EXPECT_EQ(FormatStudyProgress(p),
            "studies/3: 3/? trials done, 2 running, 1 failed, best loss 0.4 "
            "(trial 2)");
}

TEST(StudyWaitFormatTest, PlainOutputPrintsChangedLinesOnly) {
  std::ostringstream out;
  ProgressPrinter printer(&out, /*terminal=*/false);
  printer.Show("a");
  printer.Show("a");
  printer.Note("note");
  printer.Show("b");
  printer.Finish();
  EXPECT_EQ(out.str(), "a\nnote\nb\n");
}

TEST(StudyWaitFormatTest, TerminalOutputRewritesTheLineInPlace) {
  std::ostringstream out;
  ProgressPrinter printer(&out, /*terminal=*/true);
  printer.Show("a");
  printer.Show("b");
  printer.Note("note");
  printer.Show("c");
  printer.Finish();
  EXPECT_EQ(out.str(), "\r\033[Ka\r\033[Kb\r\033[Knote\n\r\033[Kc\n");
}

TEST(StudyWaitFormatTest, BackoffDoublesToFiveSecondsAndResets) {
  ReconnectBackoff b;
  std::vector<int64_t> ms;
  for (int i = 0; i < 7; ++i) ms.push_back(b.Next().count());
  EXPECT_EQ(ms, (std::vector<int64_t>{250, 500, 1000, 2000, 4000, 5000, 5000}));
  b.Reset();
  EXPECT_EQ(b.Next().count(), 250);
}

// `cairn ...` as a child whose stdout and stderr go to files (stdout is not
// a terminal, so wait prints plain lines).
class CairnChild : public testing::ChildProcess {
 public:
  CairnChild(const std::vector<std::string>& args, const std::string& prefix)
      : ChildProcess(testing::BinDir() + "/cairn", args, prefix) {}
  // Waits up to 10 s for `text` in stdout.
  bool AwaitStdout(const std::string& text) const {
    for (int i = 0; i < 500; ++i) {
      if (Stdout().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
};

class StudyWaitRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<CairndProcess>(
        dir_.path() + "/data",
        std::vector<std::string>{"--metrics-listen", ""});
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    stub_ = server_->NewStub();
  }

  // Suggests one trial and completes it with its Branin value.
  void RunOneTrial(const std::string& study) {
    grpc::ClientContext sctx;
    v1::SuggestTrialsRequest sreq;
    sreq.set_parent(study);
    sreq.set_suggestion_count(1);
    v1::SuggestTrialsResponse sresp;
    const grpc::Status st = stub_->SuggestTrials(&sctx, sreq, &sresp);
    ASSERT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
    ASSERT_EQ(sresp.trials_size(), 1);
    const v1::Trial& t = sresp.trials(0);
    grpc::ClientContext cctx;
    v1::CompleteTrialRequest creq;
    creq.set_name(t.name());
    *creq.mutable_final_measurement() =
        testing::Loss(testing::Branin(t.parameters(0).value().number_value(),
                                      t.parameters(1).value().number_value()));
    v1::Trial done;
    ASSERT_TRUE(stub_->CompleteTrial(&cctx, creq, &done).ok());
  }

  // After a restart: the first calls may still meet the dead connection
  // ("Socket closed"), so poll GetStudy until the new cairnd answers.
  void AwaitServing(const std::string& study) {
    for (int i = 0; i < 100; ++i) {
      grpc::ClientContext ctx;
      v1::GetStudyRequest req;
      req.set_name(study);
      v1::Study out;
      if (stub_->GetStudy(&ctx, req, &out).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "the restarted cairnd does not answer";
  }

  TempDir dir_;
  std::unique_ptr<CairndProcess> server_;
  std::unique_ptr<v1::StudyService::Stub> stub_;
};

TEST_F(StudyWaitRestartTest, WaitSurvivesACairndRestart) {
  v1::CreateStudyRequest create;
  create.mutable_study()->set_display_name("restart-wait");
  *create.mutable_study()->mutable_spec() = testing::BraninSpec();
  create.mutable_study()->mutable_spec()->set_algorithm(
      v1::StudySpec::RANDOM_SEARCH);
  create.mutable_study()->mutable_spec()->set_max_trials(4);
  grpc::ClientContext ctx;
  v1::Study study;
  ASSERT_TRUE(stub_->CreateStudy(&ctx, create, &study).ok());
  RunOneTrial(study.name());
  RunOneTrial(study.name());

  CairnChild wait({"--server", server_->address(), "study", "wait",
                   "restart-wait", "--interval", "0.1"},
                  dir_.path() + "/wait");
  ASSERT_TRUE(wait.AwaitStdout("2/4 trials done, 0 running, best loss"))
      << wait.Stdout() << wait.Stderr();

  server_->Kill9();
  ASSERT_TRUE(wait.AwaitStdout("is unavailable; reconnecting"))
      << wait.Stdout() << wait.Stderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::string error;
  ASSERT_TRUE(server_->RestartOnSamePort(&error)) << error;
  stub_ = server_->NewStub();
  AwaitServing(study.name());
  ASSERT_TRUE(wait.AwaitStdout("reconnected to cairnd after"))
      << wait.Stdout() << wait.Stderr();
  RunOneTrial(study.name());
  RunOneTrial(study.name());

  EXPECT_EQ(wait.Wait(std::chrono::seconds(20)), 0) << wait.Stderr();
  const std::string out = wait.Stdout();
  EXPECT_THAT(out, HasSubstr("4/4 trials done, 0 running, best loss"));
  EXPECT_THAT(out, HasSubstr(study.name() + " is COMPLETED: max_trials (4)"));
  // Not a terminal: plain lines, no carriage returns or escape sequences.
  EXPECT_THAT(out, Not(HasSubstr("\r")));
  EXPECT_THAT(out, Not(HasSubstr("\033")));
}

TEST_F(StudyWaitRestartTest, WrongServerFailsAtOnce) {
  server_->Kill9();  // Nothing listens on its port now.
  CairnChild wait({"--server", server_->address(), "--timeout", "2", "study",
                   "wait", "studies/1"},
                  dir_.path() + "/wrong");
  EXPECT_EQ(wait.Wait(std::chrono::seconds(10)), 1);
  EXPECT_THAT(wait.Stderr(), HasSubstr("cairnd at " + server_->address()));
}

}  // namespace
}  // namespace cairn::cli
