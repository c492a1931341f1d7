// The REST API's JSON mapping pieces and the CSV export, without a server.
#include "http/rest_json.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "cairn/v1/study_service.pb.h"
#include "gtest/gtest.h"

namespace cairn::http {
namespace {

TEST(RestJson, StatusCodesMapToHttp) {
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::OK), 200);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNAUTHENTICATED), 401);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::PERMISSION_DENIED), 403);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::ALREADY_EXISTS), 409);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::RESOURCE_EXHAUSTED), 429);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::INTERNAL), 500);
}

TEST(RestJson, ErrorNamesCodeAndMessage) {
  const HttpResponse r =
      ErrorResponse(grpc::Status(grpc::StatusCode::NOT_FOUND, "study x"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(
      r.body,
      R"({"error":{"code":404,"message":"study x","status":"NOT_FOUND"}})");
  const HttpResponse denied = ErrorResponse(
      grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no token"));
  ASSERT_EQ(denied.headers.size(), 1u);
  EXPECT_EQ(denied.headers[0].first, "WWW-Authenticate");
}

TEST(RestJson, QueryFillsTheRequest) {
  cairn::v1::GetMetricHistoryRequest request;
  ASSERT_TRUE(ParseQuery("metric_id=lo%20ss&pageSize=7&start_step=3&"
                         "format=csv&max_points=100",
                         &request)
                  .ok());
  EXPECT_EQ(request.metric_id(), "lo ss");
  EXPECT_EQ(request.page_size(), 7);
  EXPECT_EQ(request.start_step().value(), 3);
  EXPECT_EQ(request.max_points(), 100);
  cairn::v1::ListTrialsRequest list;
  ASSERT_TRUE(ParseQuery("include_measurements=true", &list).ok());
  EXPECT_TRUE(list.include_measurements());
}

TEST(RestJson, BadQueryNamesKeyAndValue) {
  cairn::v1::ListTrialsRequest request;
  const absl::Status s = ParseQuery("page_size=ten", &request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "page_size=\"ten\"")) << s;
  EXPECT_FALSE(ParseQuery("no_such_field=1", &request).ok());
}

TEST(RestJson, BodyUsesTheProtobufJsonMapping) {
  cairn::v1::CreateTrialRequest request;
  ASSERT_TRUE(ParseJsonBody(R"({"trial": {"parameters": [
      {"parameterId": "x", "value": 0.5}]}})",
                            &request)
                  .ok());
  EXPECT_EQ(request.trial().parameters(0).value().number_value(), 0.5);
  const absl::Status bad = ParseJsonBody("{\"trial\": 3}", &request);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.message(), "CreateTrialRequest")) << bad;
  EXPECT_EQ(JsonResponse(request.trial()).status, 200);
}

}  // namespace
}  // namespace cairn::http
