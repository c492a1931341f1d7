// Calls in progress per token (auth/call_slots.h): the bound itself, and a
// real cairnd with --max-calls-per-token 3 whose admin holds three streams
// open: its fourth call is refused at once, a viewer is served meanwhile,
// and a slot comes back when a stream ends or is cancelled. A stream with no
// token is refused before its first message.
#include "auth/call_slots.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/client_token.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;
namespace v1 = cairn::v1;

TEST(CallSlotsTest, BoundsEachPrincipalAlone) {
  auth::CallSlots slots(2);
  int a1, a2, a3, b1;
  ASSERT_TRUE(slots.Acquire(&a1, "alice").ok());
  ASSERT_TRUE(slots.Acquire(&a2, "alice").ok());
  const absl::Status third = slots.Acquire(&a3, "alice");
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.message(),
              HasSubstr("'alice' already has 2 calls in progress"));
  EXPECT_TRUE(slots.Acquire(&b1, "bob").ok());    // Others are not affected.
  EXPECT_TRUE(slots.Acquire(&a1, "alice").ok());  // Held: kept, not counted.
  EXPECT_EQ(slots.InProgress("alice"), 2);
  slots.Release(&a1);
  slots.Release(&a1);  // Twice: nothing more.
  slots.Release(&a3);  // Never admitted: nothing.
  EXPECT_EQ(slots.InProgress("alice"), 1);
  EXPECT_TRUE(slots.Acquire(&a3, "alice").ok());
  EXPECT_EQ(slots.InProgress("bob"), 1);
}

class CallSlotsIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server_.Start(&error)) << error << server_.Log();
    stub_ = server_.NewStub();
  }

  // GetStudy of a study that does not exist with `stub`: NOT_FOUND once
  // served, RESOURCE_EXHAUSTED when refused for want of a slot.
  static grpc::Status Probe(v1::StudyService::Stub* stub) {
    grpc::ClientContext ctx;
    v1::GetStudyRequest request;
    request.set_name("studies/999");
    v1::Study study;
    return stub->GetStudy(&ctx, request, &study);
  }

  // Probes until `code` comes back (the server takes a stream's slot a
  // moment after the client wrote its first message); the last status.
  static grpc::Status ProbeUntil(v1::StudyService::Stub* stub,
                                 grpc::StatusCode code) {
    grpc::Status s;
    for (int i = 0; i < 500; ++i) {
      s = Probe(stub);
      if (s.error_code() == code) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return s;
  }

  // A ReportMeasurements stream the admin holds open: one message written,
  // so the handler has authorized it and waits for the next.
  struct OpenStream {
    grpc::ClientContext ctx;
    v1::ReportMeasurementsResponse response;
    std::unique_ptr<grpc::ClientWriter<v1::ReportMeasurementsRequest>> writer;
  };
  std::unique_ptr<OpenStream> Open() {
    auto s = std::make_unique<OpenStream>();
    s->writer = stub_->ReportMeasurements(&s->ctx, &s->response);
    v1::ReportMeasurementsRequest first;
    first.set_trial_name("studies/999/trials/1");
    first.mutable_measurement()->set_step_count(1);
    EXPECT_TRUE(s->writer->Write(first));
    return s;
  }

  testing::TempDir dir_;
  testing::CairndProcess server_{
      dir_.path() + "/data",
      {"--metrics-listen", "", "--max-calls-per-token", "3"}};
  std::unique_ptr<v1::StudyService::Stub> stub_;
};

TEST_F(CallSlotsIntegrationTest, HeldStreamsBoundOnlyTheirOwnToken) {
  auto admin = v1::AdminService::NewStub(server_.NewChannel());
  grpc::ClientContext token_ctx;
  v1::CreateTokenRequest create;
  create.set_name("watcher");
  create.set_role(v1::VIEWER);
  v1::CreateTokenResponse viewer_token;
  ASSERT_TRUE(admin->CreateToken(&token_ctx, create, &viewer_token).ok());
  auto viewer = v1::StudyService::NewStub(
      auth::NewAuthChannel(server_.address(), viewer_token.secret()));

  std::vector<std::unique_ptr<OpenStream>> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(Open());
  const grpc::Status refused =
      ProbeUntil(stub_.get(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  EXPECT_THAT(refused.error_message(),
              HasSubstr("'admin' already has 3 calls in progress"));
  EXPECT_EQ(Probe(viewer.get()).error_code(), grpc::StatusCode::NOT_FOUND);

  // A stream that ends gives its slot back...
  streams[0]->writer->WritesDone();
  streams[0]->writer->Finish();
  EXPECT_EQ(ProbeUntil(stub_.get(), grpc::StatusCode::NOT_FOUND).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // ... and so does one the client cancels.
  streams.push_back(Open());
  ASSERT_EQ(ProbeUntil(stub_.get(), grpc::StatusCode::RESOURCE_EXHAUSTED)
                .error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  streams[1]->ctx.TryCancel();
  EXPECT_EQ(ProbeUntil(stub_.get(), grpc::StatusCode::NOT_FOUND).error_code(),
            grpc::StatusCode::NOT_FOUND);
  for (size_t i = 2; i < streams.size(); ++i) streams[i]->ctx.TryCancel();
}

// A stream is authorized before its first message is read: one opened
// without a token, that never sends anything, is refused at once instead of
// holding a server thread (1,000 such streams were 1,017 threads).
TEST_F(CallSlotsIntegrationTest,
       StreamWithoutTokenIsRefusedBeforeItsFirstRead) {
  auto anonymous = v1::StudyService::NewStub(grpc::CreateChannel(
      server_.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ReportMeasurementsResponse response;
  auto writer = anonymous->ReportMeasurements(&ctx, &response);
  const grpc::Status s = writer->Finish();  // Nothing written, no WritesDone.
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
}

}  // namespace
}  // namespace cairn
