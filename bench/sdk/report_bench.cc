// cairn_bench_report: client CPU per reported point of the C++ client, the
// baseline of the Python SDK's reporting (bench/sdk/run.sh runs both against
// one cairnd and prints the ratio).
//
// Streams --points measurements (one metric each) of one trial through the
// client-streaming ReportMeasurements, one message per point as a C++ client
// reports a training loop, in streams of --batch points (each stream's
// response means its points are durable), then prints
//   cpp_report_cpu_us_per_point  (user + system CPU of this process) / points
//   cpp_report_wall_us_per_point wall time / points
// The trial: --trial studies/N/trials/M (the caller creates it).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "CLI/CLI.hpp"
#include "auth/client_token.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace {

namespace v1 = cairn::v1;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) *
             1e-6;
}

// Streams points [first, first + count) of `trial`; false on error.
bool StreamPoints(v1::StudyService::Stub& stub, const std::string& trial,
                  int64_t first, int64_t count) {
  grpc::ClientContext context;
  v1::ReportMeasurementsResponse response;
  auto writer = stub.ReportMeasurements(&context, &response);
  v1::ReportMeasurementsRequest request;
  request.set_trial_name(trial);
  v1::Metric* metric = request.mutable_measurement()->add_metrics();
  metric->set_metric_id("loss");
  for (int64_t step = first; step < first + count; ++step) {
    request.mutable_measurement()->set_step_count(step);
    metric->set_value(1.0 / static_cast<double>(step + 1));
    if (!writer->Write(request)) break;
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) {
    std::fprintf(stderr, "ReportMeasurements: %s\n",
                 status.error_message().c_str());
  }
  return status.ok();
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = "127.0.0.1:50051";
  std::string trial;
  int64_t points = 100000;
  int64_t batch = 10000;
  CLI::App app{"C++ client CPU per reported point"};
  app.add_option("--server", server, "cairnd HOST:PORT");
  app.add_option("--trial", trial, "studies/N/trials/M")->required();
  app.add_option("--points", points, "points to report")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "points per stream")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  // $CAIRN_TOKEN, else $CAIRN_TOKEN_FILE (bench/sdk/run.sh sets it).
  const char* token_file = std::getenv("CAIRN_TOKEN_FILE");
  auto token = cairn::auth::ReadClientToken(token_file ? token_file : "");
  if (!token.ok()) {
    std::fprintf(stderr, "%s\n", token.status().ToString().c_str());
    return 1;
  }
  auto stub =
      v1::StudyService::NewStub(cairn::auth::NewAuthChannel(server, *token));
  const double cpu0 = CpuSeconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int64_t first = 0; first < points; first += batch) {
    if (!StreamPoints(*stub, trial, first, std::min(batch, points - first))) {
      return 1;
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0)
          .count();
  const double cpu = CpuSeconds() - cpu0;
  std::printf("cpp_report_cpu_us_per_point %.3f\n", cpu * 1e6 / points);
  std::printf("cpp_report_wall_us_per_point %.3f\n", wall * 1e6 / points);
  return 0;
}
