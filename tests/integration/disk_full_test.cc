// A real cairnd whose data dir is on a small tmpfs (mounted by the test;
// needs root, otherwise the test skips and says so):
//  - below --min-free-space new studies and trials are refused with
//    RESOURCE_EXHAUSTED naming the flag, while a running trial still
//    reports and completes;
//  - when the disk is full (below the 40 MB the store needs to write
//    safely) a report fails with RESOURCE_EXHAUSTED naming the store path;
//    cairnd does not abort, keeps serving reads (exactly the acknowledged
//    measurements) and exports cairn_store_writable 0;
//  - once space is freed, reports succeed again within 30 s without a
//    restart, and cairn_store_writable is 1;
//  - after a restart every acknowledged measurement is there.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/monitoring/test_util.h"
#include "tests/testing/test_util.h"
#include "tests/testing/tmpfs.h"

namespace cairn {
namespace {

using cairn::v1::Trial;
using ::testing::HasSubstr;
namespace mt = cairn::monitoring::testing;

constexpr uint64_t kTmpfsBytes = 96 << 20;
// cairnd's reserve for new studies and trials; the store itself stops
// writing below 40 MB (kMinFreeBytesToWrite).
constexpr uint64_t kReserve = 64 << 20;

class Client {
 public:
  explicit Client(const testing::CairndProcess& server)
      : stub_(server.NewStub()) {}

  grpc::Status CreateStudy(const std::string& name, cairn::v1::Study* out) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name(name);
    *req.mutable_study()->mutable_spec() = testing::BraninSpec();
    grpc::ClientContext ctx;
    return stub_->CreateStudy(&ctx, req, out);
  }
  grpc::Status Suggest(const std::string& study, const std::string& client,
                       cairn::v1::SuggestTrialsResponse* out) {
    cairn::v1::SuggestTrialsRequest req;
    req.set_parent(study);
    req.set_suggestion_count(1);
    req.set_client_id(client);
    grpc::ClientContext ctx;
    return stub_->SuggestTrials(&ctx, req, out);
  }
  grpc::Status Report(const std::string& trial, int64_t step) {
    cairn::v1::AddTrialMeasurementRequest req;
    req.set_trial_name(trial);
    *req.mutable_measurement() = testing::Loss(1000.0 - step, step);
    Trial out;
    grpc::ClientContext ctx;
    return stub_->AddTrialMeasurement(&ctx, req, &out);
  }
  // The steps of the trial's "loss" curve, in report order.
  grpc::Status Steps(const std::string& trial, std::vector<int64_t>* out) {
    cairn::v1::GetMetricHistoryRequest req;
    req.set_trial_name(trial);
    req.set_metric_id("loss");
    cairn::v1::GetMetricHistoryResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->GetMetricHistory(&ctx, req, &resp);
    out->clear();
    for (const auto& p : resp.points()) out->push_back(p.step_count());
    return st;
  }

 private:
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

// 0, 1, ..., n - 1.
std::vector<int64_t> AllSteps(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

double Writable(int metrics_port) {
  absl::StatusOr<mt::HttpResponse> r = mt::HttpGet(metrics_port, "/metrics");
  if (!r.ok()) return -1;
  return mt::Sample(r->body, "cairn_store_writable", {}).value_or(-1);
}

TEST(DiskFullIntegrationTest, ReserveThenFullThenRecoversWithoutRestart) {
  testing::ScopedTmpfs tmpfs(kTmpfsBytes);
  if (!tmpfs.status().ok()) GTEST_SKIP() << "skipped: " << tmpfs.status();
  const std::string data = tmpfs.path() + "/data";
  const int metrics_port = mt::FreeLoopbackPort();
  testing::CairndProcess server(
      data, {"--min-free-space", absl::StrCat(kReserve >> 20, "MB"),
             "--metrics-listen", absl::StrCat("127.0.0.1:", metrics_port)});
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  Client client(server);
  cairn::v1::Study study;
  ASSERT_TRUE(client.CreateStudy("before", &study).ok());
  cairn::v1::SuggestTrialsResponse suggested;
  ASSERT_TRUE(client.Suggest(study.name(), "w1", &suggested).ok());
  const std::string trial = suggested.trials(0).name();
  int64_t step = 0;
  ASSERT_TRUE(client.Report(trial, step++).ok());

  // Below the reserve: no new study or trial; the running trial reports.
  tmpfs.Fill("filler", tmpfs.FreeBytes() - (kReserve - (12 << 20)));
  cairn::v1::Study refused;
  grpc::Status st = client.CreateStudy("after", &refused);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr("--min-free-space"));
  st = client.Suggest(study.name(), "w2", &suggested);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_TRUE(client.Report(trial, step++).ok());

  // Full (below what the store needs to write safely): reports fail
  // cleanly, reads keep working.
  tmpfs.Fill("filler", 24 << 20);
  const int64_t acked = step;
  st = client.Report(trial, step);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr(data));
  std::vector<int64_t> steps;
  grpc::Status got = client.Steps(trial, &steps);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_EQ(steps, AllSteps(acked));
  EXPECT_EQ(client.Report(trial, step).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(waitpid(server.pid(), nullptr, WNOHANG), 0) << "cairnd exited";
  EXPECT_EQ(Writable(metrics_port), 0);

  // Space is back: writes succeed again without a restart.
  std::remove((tmpfs.path() + "/filler").c_str());
  const auto freed = std::chrono::steady_clock::now();
  int64_t next = acked;
  while (!client.Report(trial, next).ok()) {
    ASSERT_LT(std::chrono::steady_clock::now() - freed,
              std::chrono::seconds(30))
        << "writes did not resume within 30 s";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ++next;
  std::printf(
      "writes resumed %.1f s after space was freed\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - freed)
          .count());
  EXPECT_EQ(Writable(metrics_port), 1);
  ASSERT_TRUE(client.CreateStudy("after", &refused).ok());

  server.Kill9();
  ASSERT_TRUE(server.Start(&error)) << error;
  Client again(server);
  ASSERT_TRUE(again.Steps(trial, &steps).ok());
  EXPECT_EQ(steps, AllSteps(next));
}

}  // namespace
}  // namespace cairn
