// The metrics interceptor on a real in-process gRPC server (loopback TCP)
// running a fake StudyService: unary, client-streaming, unimplemented and
// unknown methods.
#include "monitoring/grpc_metrics_interceptor.h"

#include <chrono>
#include <future>
#include <thread>

#include "cairn/v1/study_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "monitoring/metrics.h"
#include "tests/monitoring/test_util.h"
#include "tests/testing/fake_study_service.h"

namespace cairn::monitoring {
namespace {

using ::cairn::monitoring::testing::Sample;
using ::testing::DoubleNear;
using ::testing::Optional;

class InterceptorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MetricsOptions options;
    options.listen_address = "";
    absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    metrics_ = std::move(*metrics);

    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    builder.experimental().SetInterceptorCreators(
        MakeGrpcMetricsInterceptors(metrics_.get()));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    stub_ = cairn::v1::StudyService::NewStub(channel_);
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  grpc::Status CreateStudy(const std::string& display_name) {
    grpc::ClientContext context;
    cairn::v1::CreateStudyRequest request;
    request.mutable_study()->set_display_name(display_name);
    cairn::v1::Study study;
    return stub_->CreateStudy(&context, request, &study);
  }

  cairn::testing::FakeStudyService service_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

TEST_F(InterceptorTest, RecordsUnaryCallsByMethodAndCode) {
  EXPECT_TRUE(CreateStudy("a").ok());
  EXPECT_TRUE(CreateStudy("b").ok());
  EXPECT_EQ(CreateStudy("taken").error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  std::string text = metrics_->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "CreateStudy"}, {"code", "OK"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "CreateStudy"}, {"code", "ALREADY_EXISTS"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_request_duration_seconds_count",
                     {{"method", "CreateStudy"}}),
              Optional(3.0));
}

TEST_F(InterceptorTest, MeasuresLatency) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(CreateStudy("slow").ok());
  double client_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string text = metrics_->ScrapeText();
  std::optional<double> sum =
      Sample(text, "cairn_grpc_request_duration_seconds_sum",
             {{"method", "CreateStudy"}});
  ASSERT_TRUE(sum.has_value());
  EXPECT_GE(*sum, 0.05);
  EXPECT_LE(*sum, client_seconds);
  EXPECT_THAT(Sample(text, "cairn_grpc_request_duration_seconds_bucket",
                     {{"method", "CreateStudy"}, {"le", "0.025"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_request_duration_seconds_bucket",
                     {{"method", "CreateStudy"}, {"le", "+Inf"}}),
              Optional(1.0));
}

TEST_F(InterceptorTest, RecordsClientStreamingCallsOnce) {
  for (bool valid : {true, false}) {
    grpc::ClientContext context;
    cairn::v1::ReportMeasurementsResponse response;
    std::unique_ptr<grpc::ClientWriter<cairn::v1::ReportMeasurementsRequest>>
        writer = stub_->ReportMeasurements(&context, &response);
    for (int i = 0; i < 5; ++i) {
      cairn::v1::ReportMeasurementsRequest request;
      if (valid || i < 2) request.set_trial_name("studies/1/trials/1");
      request.mutable_measurement()->set_step_count(i);
      if (!writer->Write(request)) break;
    }
    writer->WritesDone();
    grpc::Status status = writer->Finish();
    if (valid) {
      EXPECT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.measurements_written(), 5);
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    }
  }
  std::string text = metrics_->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "ReportMeasurements"}, {"code", "OK"}}),
              Optional(1.0));
  EXPECT_THAT(
      Sample(text, "cairn_grpc_requests_total",
             {{"method", "ReportMeasurements"}, {"code", "INVALID_ARGUMENT"}}),
      Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_request_duration_seconds_count",
                     {{"method", "ReportMeasurements"}}),
              Optional(2.0));
}

TEST_F(InterceptorTest, UnimplementedAndUnknownMethods) {
  // GetStudy exists in the service but the fake does not implement it.
  grpc::ClientContext context;
  cairn::v1::GetStudyRequest request;
  cairn::v1::Study study;
  EXPECT_EQ(stub_->GetStudy(&context, request, &study).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  // A method no service defines is recorded as "unknown", so made-up names
  // cannot grow the label set.
  grpc::GenericStub generic(channel_);
  grpc::ClientContext generic_context;
  grpc::Slice payload("");
  grpc::ByteBuffer empty_request(&payload, 1), reply;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&generic_context, "/made.up.Service/Probe",
                    grpc::StubOptions(), &empty_request, &reply,
                    [&done](grpc::Status status) { done.set_value(status); });
  EXPECT_EQ(done.get_future().get().error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  std::string text = metrics_->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "GetStudy"}, {"code", "UNIMPLEMENTED"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "unknown"}, {"code", "UNIMPLEMENTED"}}),
              Optional(1.0));
  EXPECT_EQ(text.find("Probe"), std::string::npos) << text;
}

TEST(GrpcLabelsTest, MethodAndCodeNames) {
  EXPECT_EQ(GrpcMethodLabel("/cairn.v1.StudyService/SuggestTrials"),
            "SuggestTrials");
  EXPECT_EQ(GrpcMethodLabel("/cairn.v1.StudyService/NoSuchMethod"), "unknown");
  EXPECT_EQ(GrpcMethodLabel("/no.Such/Method"), "unknown");
  EXPECT_EQ(GrpcMethodLabel(""), "unknown");
  EXPECT_EQ(GrpcMethodLabel("garbage"), "unknown");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::FAILED_PRECONDITION),
            "FAILED_PRECONDITION");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
}

}  // namespace
}  // namespace cairn::monitoring
