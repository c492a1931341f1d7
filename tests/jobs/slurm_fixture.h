// One home for what the Slurm integration tests (slurm_test,
// slurm_container_test) share: a real two-node cluster on this host
// (scripts/slurm-local.sh, started once per test suite in a temp dir and
// stopped at its end) and a cairnd --executor=slurm talking to it. Tests
// skip (with the reason) when the Slurm binaries are missing and fail, with
// its output, when the cluster (or a suite's own set-up in start_error_)
// does not start.
#ifndef CAIRN_TESTS_JOBS_SLURM_FIXTURE_H_
#define CAIRN_TESTS_JOBS_SLURM_FIXTURE_H_

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/jobs/study_fixture.h"
#include "tests/monitoring/test_util.h"
#include "tests/testing/test_util.h"

namespace cairn::testing {

// Runs a shell command line built by the test only (no untrusted input);
// its stdout.
inline std::string Sh(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class SlurmFixture : public StudyFixture {
 protected:
  static void SetUpTestSuite() {
    if (Sh("PATH=$PATH:/usr/sbin:/sbin; for b in sbatch slurmctld slurmd "
           "munged; do command -v $b; done | wc -l") != "4\n") {
      skip_ =
          "Slurm binaries missing (apt-get install slurmctld slurmd "
          "slurm-client munge)";
      return;
    }
    cluster_ = new TempDir();
    const std::string out =
        Sh(absl::StrCat(SourceDir(), "/scripts/slurm-local.sh start ",
                        cluster_->path(), "/slurm 2>&1"));
    if (out.find("export SLURM_CONF=") == std::string::npos) {
      skip_ = "";
      start_error_ = out;
      return;
    }
    setenv("SLURM_CONF", (cluster_->path() + "/slurm/slurm.conf").c_str(), 1);
  }
  static void TearDownTestSuite() {
    if (cluster_ == nullptr) return;
    Sh(absl::StrCat(SourceDir(), "/scripts/slurm-local.sh stop ",
                    cluster_->path(), "/slurm 2>&1"));
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_EQ(start_error_, "") << "the suite's set-up failed";
    for (absl::string_view id : absl::StrSplit(Sh("squeue -h -t all -o %i"),
                                               '\n', absl::SkipEmpty())) {
      int64_t n = 0;
      if (absl::SimpleAtoi(id, &n)) first_job_ = std::max(first_job_, n);
    }
  }

  // cairnd --executor=slurm on dir_/data with `extra_args`; stub_ talks to
  // it.
  void StartServer(const std::vector<std::string>& extra_args = {}) {
    metrics_port_ = monitoring::testing::FreeLoopbackPort();
    std::vector<std::string> args = {"--executor=slurm", "--grace-seconds", "2",
                                     "--metrics-listen",
                                     absl::StrCat("127.0.0.1:", metrics_port_)};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    server_ = std::make_unique<CairndProcess>(dir_.path() + "/data", args);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    stub_ = server_->NewStub();
  }

  // Stops study `name` (SetStudyState COMPLETED): its jobs are cancelled.
  void StopStudy(const std::string& name) {
    cairn::v1::SetStudyStateRequest req;
    req.set_name(name);
    req.set_state(cairn::v1::Study::COMPLETED);
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->SetStudyState(&ctx, req, &out);
    ASSERT_TRUE(st.ok()) << "SetStudyState: " << st.error_message();
  }

  static inline TempDir* cluster_ = nullptr;
  static inline std::string skip_;
  static inline std::string start_error_;
  int64_t first_job_ = 0;  // Jobs of earlier tests have ids up to this.
  TempDir dir_;
  int metrics_port_ = 0;
  std::unique_ptr<CairndProcess> server_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_JOBS_SLURM_FIXTURE_H_
