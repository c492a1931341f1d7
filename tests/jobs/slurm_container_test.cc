// Trials in a container image on the Slurm executor, against a real
// two-node cluster on this host (tests/jobs/slurm_fixture.h) and real
// rootless podman as the job user on the nodes (jobs/slurm_container.h):
// a study's trials run the test image (tests/containers/ensure_image.sh,
// copied into the job user's store by scripts/podman-user.sh) and SUCCEED
// with the metric written to cloudml-hypertune's in-container default path
// or reported through `import cairn.job` from the SDK cairnd mounts;
// a study stop (scancel) leaves no container and no Slurm job behind; an
// image missing from the job user's store fails at submission, named.
// Skipped (with the reason) only when the Slurm binaries are missing; a
// set-up that fails (the cluster, the images, the job user's rootless
// podman) fails every test with its output.
#include <pwd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/jobs/slurm_fixture.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::Trial;
using testing::Sh;

constexpr char kUser[] = "cairnjob";
constexpr char kImage[] = "localhost/cairn-test-trainer:1";
// kImage plus grpcio and protobuf (tests/containers/Containerfile.sdk).
constexpr char kSdkImage[] = "localhost/cairn-test-sdk-trainer:1";

class SlurmContainerTest : public testing::SlurmFixture {
 protected:
  static void SetUpTestSuite() {
    SlurmFixture::SetUpTestSuite();
    if (!skip_.empty() || !start_error_.empty()) return;
    const std::string src = testing::SourceDir();
    const std::string out = Sh(absl::StrCat(
        src, "/tests/containers/ensure_image.sh 2>&1 && ",
        "podman build -q --network=host --pull=never -t ", kSdkImage, " -f ",
        src, "/tests/containers/Containerfile.sdk ", src,
        "/tests/containers >/dev/null 2>&1 && ", src,
        "/scripts/podman-user.sh ", kUser, " ", kImage, " ", kSdkImage,
        " 2>&1; echo rc=$?"));
    if (out.find("rc=0\n") == std::string::npos) {
      start_error_ =
          "the test images or the job user's rootless podman could not be "
          "set up (tests/containers/ensure_image.sh, "
          "scripts/podman-user.sh): " +
          out;
    }
  }

  // `podman ARGS` as the job user, in its own (rootless) store.
  static std::string UserPodman(const std::string& args) {
    const passwd* pw = getpwnam(kUser);
    return Sh(absl::StrCat("cd / && runuser -u ", kUser,
                           " -- env -i HOME=", pw != nullptr ? pw->pw_dir : "/",
                           " PATH=/usr/bin:/bin podman ", args,
                           " 2>/dev/null"));
  }

  std::string Containers() {
    return UserPodman(absl::StrCat("ps -a --format '{{.Names}}' --filter ",
                                   "label=cairn.data_dir=", dir_.path(),
                                   "/data"));
  }

  // A study of `trials` trials in the test image; `args` follow the
  // trainer's command.
  Study CreateInImage(const std::string& name, int trials,
                      const std::string& args,
                      const std::string& image = kImage) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name(name);
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
        absl::StrCat(R"pb(
                       parameters {
                         parameter_id: "x"
                         type: DISCRETE
                         discrete_values: [ 2, 3 ]
                       }
                       metrics { metric_id: "loss" goal: MINIMIZE }
                       algorithm: GRID_SEARCH
                       max_trials:)pb",
                     trials, " max_parallel_trials: 2 job_template {",
                     " container { image: \"", image, "\" command: [",
                     "\"python3\", \"/opt/trainer/trainer.py\"", args, "] } }"),
        req.mutable_study()->mutable_spec()));
    Study out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->CreateStudy(&ctx, req, &out);
    EXPECT_TRUE(st.ok()) << "CreateStudy: " << st.error_message();
    return out;
  }
};

TEST_F(SlurmContainerTest, TrialsRunTheImageAsTheJobUserAndReport) {
  StartServer({"--job-user", kUser});
  Study study = CreateInImage("img", 2, ", \"--metric-path=default\"");
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED)
      << done.inactive_reason() << testing::ReadFile(server_->log_path());
  const passwd* pw = getpwnam(kUser);
  ASSERT_NE(pw, nullptr);
  const std::vector<Trial> trials = Trials(study.name());
  ASSERT_EQ(trials.size(), 2u) << testing::ReadFile(server_->log_path());
  for (const Trial& t : trials) {
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.ShortDebugString();
    const double x = t.parameters(0).value().number_value();
    ASSERT_EQ(t.final_measurement().metrics_size(), 1) << t.ShortDebugString();
    EXPECT_DOUBLE_EQ(t.final_measurement().metrics(0).value(), x * x);
    const std::string log = testing::ReadFile(t.job().job_dir() + "/job.log");
    // The trainer ran in the image, as the job user, on a Slurm node.
    EXPECT_NE(log.find(absl::StrCat("whoami uid=", pw->pw_uid)),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("is Slurm task 0 of job"), std::string::npos) << log;
  }
  EXPECT_EQ(Containers(), "") << "containers left after the study";
}

TEST_F(SlurmContainerTest, TrainerReportsThroughCairnJobFromTheMountedSdk) {
  StartServer({"--job-user", kUser});
  // The image has no SDK: cairnd's (CAIRN_PYTHON_SDK) is mounted read-only.
  Study study = CreateInImage("sdk", 1, ", \"--metric-path=sdk\"", kSdkImage);
  Study done = WaitDone(study.name(), 120);
  EXPECT_EQ(done.state(), Study::COMPLETED) << done.inactive_reason();
  const std::vector<Trial> trials = Trials(study.name());
  ASSERT_EQ(trials.size(), 1u);
  const Trial& t = trials[0];
  EXPECT_EQ(t.state(), Trial::SUCCEEDED)
      << t.ShortDebugString()
      << testing::ReadFile(t.job().job_dir() + "/job.log");
  const double x = t.parameters(0).value().number_value();
  ASSERT_EQ(t.measurements_size(), 1) << t.ShortDebugString();
  EXPECT_EQ(t.measurements(0).step_count(), 1);
  EXPECT_DOUBLE_EQ(t.measurements(0).metrics(0).value(), x * x);
  // Not through the hypertune file: it stayed empty.
  EXPECT_EQ(testing::ReadFile(t.job().job_dir() + "/hypertune.metrics"), "");
}

TEST_F(SlurmContainerTest, MissingImageFailsAtSubmissionNamingIt) {
  StartServer({"--job-user", kUser});
  const std::string image = "localhost/cairn-no-such-image:1";
  Study study = CreateInImage("missing", 1, "", image);
  WaitDone(study.name(), 60);
  const std::vector<Trial> trials = Trials(study.name());
  ASSERT_EQ(trials.size(), 1u) << testing::ReadFile(server_->log_path());
  const Trial& t = trials[0];
  EXPECT_EQ(t.state(), Trial::FAILED) << t.ShortDebugString();
  // Refused before sbatch: the job never reached Slurm.
  EXPECT_EQ(t.job().pid(), 0) << t.ShortDebugString();
  EXPECT_NE(
      t.job().message().find(absl::StrCat(
          "'", image, "' is not in the image store of job user '", kUser)),
      std::string::npos)
      << t.ShortDebugString();
}

TEST_F(SlurmContainerTest, StudyStopLeavesNoContainer) {
  StartServer({"--job-user", kUser});
  // The trainer ignores SIGTERM: podman stop must kill it after the grace.
  Study study =
      CreateInImage("stop", 1, ", \"--sleep=300\", \"--ignore-term=1\"");
  std::string running;
  for (int i = 0; i < 600 && running.empty(); ++i) {
    running = Containers();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(running, "") << "no container started";
  ASSERT_NO_FATAL_FAILURE(StopStudy(study.name()));
  const auto start = std::chrono::steady_clock::now();
  std::string left = running, jobs;
  for (int i = 0; i < 300 && !(left.empty() && jobs.empty()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = Containers();
    jobs = Sh("squeue -h -o '%j %T' 2>/dev/null | grep '^cairn-' || true");
  }
  EXPECT_EQ(left, "") << "container left after study stop";
  EXPECT_EQ(jobs, "") << "jobs left in squeue after study stop";
  // SIGTERM is ignored: the container went at the grace (2 s), not at once
  // (a SIGKILL) nor at Slurm's KillWait (30 s).
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(1900));
  EXPECT_LT(took, std::chrono::seconds(25));
}

}  // namespace
}  // namespace cairn
