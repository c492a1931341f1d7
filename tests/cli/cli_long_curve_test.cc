// End to end: a 300,000-point learning curve written through the
// ReportMeasurements stream of a real cairnd, read back whole and in order by
// `cairn trial history` (which pages), while GetTrial stays under gRPC's 4 MB.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "api/limits.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_util.h"

namespace {

using ::cairn::testing::CairndProcess;
using ::cairn::testing::CommandResult;
using ::cairn::testing::RunCommand;
using ::cairn::testing::TempDir;

constexpr int64_t kPoints = 300000;

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

double ValueAt(int64_t step) { return 1.0 / (1.0 + step); }

// Streams steps 0 .. kPoints - 1 of "loss" to `trial` in one stream.
void ReportCurve(cairn::v1::StudyService::Stub& stub,
                 const std::string& trial) {
  grpc::ClientContext ctx;
  cairn::v1::ReportMeasurementsResponse response;
  auto writer = stub.ReportMeasurements(&ctx, &response);
  cairn::v1::ReportMeasurementsRequest request;
  request.set_trial_name(trial);
  for (int64_t step = 0; step < kPoints; ++step) {
    cairn::v1::Measurement* m = request.mutable_measurement();
    m->Clear();
    m->set_step_count(step);
    m->mutable_elapsed_duration()->set_seconds(step);
    auto* metric = m->add_metrics();
    metric->set_metric_id("loss");
    metric->set_value(ValueAt(step));
    ASSERT_TRUE(writer->Write(request)) << "stream broke at step " << step;
  }
  writer->WritesDone();
  grpc::Status st = writer->Finish();
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(response.measurements_written(), kPoints);
}

TEST(CliLongCurveTest, HistoryStreamsEveryPointAndGetTrialStaysSmall) {
  const std::string bin_dir = Env("CAIRN_BIN_DIR", CAIRN_BIN_DIR_FALLBACK);
  TempDir dir;
  CairndProcess server(dir.path() + "/data", {"--metrics-listen", ""},
                       bin_dir + "/cairnd");
  std::string error;
  server.Start(&error);
  ASSERT_EQ(error, "") << server.Log();
  auto stub = server.NewStub();

  cairn::v1::CreateStudyRequest create;
  create.mutable_study()->set_display_name("long-curve");
  *create.mutable_study()->mutable_spec() = cairn::testing::BraninSpec();
  grpc::ClientContext create_ctx;
  cairn::v1::Study created;
  ASSERT_TRUE(stub->CreateStudy(&create_ctx, create, &created).ok());
  grpc::ClientContext suggest_ctx;
  cairn::v1::SuggestTrialsRequest suggest;
  suggest.set_parent(created.name());
  suggest.set_suggestion_count(1);
  cairn::v1::SuggestTrialsResponse suggested;
  ASSERT_TRUE(stub->SuggestTrials(&suggest_ctx, suggest, &suggested).ok());
  const cairn::v1::Trial& trial = suggested.trials(0);

  const auto start = std::chrono::steady_clock::now();
  ReportCurve(*stub, trial.name());
  const auto written = std::chrono::steady_clock::now();

  // Plain output: "STEP VALUE" per point, every step in order.
  const std::vector<std::string> history = {
      bin_dir + "/cairn", "--server",   server.address(),           "trial",
      "history",          "long-curve", std::to_string(trial.id()), "loss"};
  CommandResult plain = RunCommand(history);
  const auto read = std::chrono::steady_clock::now();
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::istringstream lines(plain.out);
  std::string line;
  int64_t want = 0;
  while (std::getline(lines, line)) {
    ASSERT_EQ(line.substr(0, line.find(' ')), std::to_string(want)) << line;
    ++want;
  }
  EXPECT_EQ(want, kPoints);

  // JSON: the same points with their exact values, in small pages.
  std::vector<std::string> as_json = history;
  as_json.insert(as_json.end(), {"--json", "--page-size", "70000"});
  CommandResult json_run = RunCommand(as_json);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const nlohmann::json points = nlohmann::json::parse(json_run.out)["points"];
  ASSERT_EQ(points.size(), static_cast<size_t>(kPoints));
  for (int64_t step = 0; step < kPoints; step += 997) {
    ASSERT_EQ(points[step]["stepCount"], std::to_string(step));
    ASSERT_EQ(points[step]["value"].get<double>(), ValueAt(step));
  }
  EXPECT_EQ(points[kPoints - 1]["stepCount"], std::to_string(kPoints - 1));

  // GetTrial: the last kMaxTrialMeasurements, flagged, far below 4 MB.
  grpc::ClientContext get_ctx;
  cairn::v1::GetTrialRequest get;
  get.set_name(trial.name());
  cairn::v1::Trial got;
  grpc::Status st = stub->GetTrial(&get_ctx, get, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(got.measurements_truncated());
  ASSERT_EQ(got.measurements_size(), cairn::api::kMaxTrialMeasurements);
  EXPECT_EQ(got.measurements(got.measurements_size() - 1).step_count(),
            kPoints - 1);
  EXPECT_LT(got.ByteSizeLong(), 4u << 20);

  using Seconds = std::chrono::duration<double>;
  std::printf(
      "write %lld points: %.2f s; read them (plain, default pages):"
      " %.2f s\n",
      static_cast<long long>(kPoints), Seconds(written - start).count(),
      Seconds(read - written).count());
  server.Terminate(std::chrono::seconds(5));
}

}  // namespace
