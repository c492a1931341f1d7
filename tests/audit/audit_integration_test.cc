// A real cairnd and the real cairn CLI: writes and refusals are audited with
// who, what, on which resource and with what result; reads only with
// --audit-reads; `cairn audit list` is for admins, filters by principal and
// prints JSON lines; the log survives kill -9; retention deletes old events.
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/client_token.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace v1 = cairn::v1;
using nlohmann::json;

const char kStudy[] = "/cairn.v1.StudyService/";

class AuditIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ServerArgs()); }
  virtual std::vector<std::string> ServerArgs() const { return {}; }

  void StartServer(std::vector<std::string> args = {}) {
    server_ = std::make_unique<testing::CairndProcess>(dir_.path() + "/data",
                                                       std::move(args));
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }

  std::string CreateToken(const std::string& name, v1::Role role) {
    auto admin = v1::AdminService::NewStub(server_->NewChannel());
    grpc::ClientContext ctx;
    v1::CreateTokenRequest request;
    request.set_name(name);
    request.set_role(role);
    v1::CreateTokenResponse response;
    grpc::Status s = admin->CreateToken(&ctx, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.secret();
  }

  std::unique_ptr<v1::StudyService::Stub> StubFor(const std::string& token) {
    return v1::StudyService::NewStub(
        auth::NewAuthChannel(server_->address(), token));
  }

  // Creates a study as `token`'s owner; returns its name.
  std::string CreateStudy(const std::string& token, const std::string& name) {
    grpc::ClientContext ctx;
    v1::CreateStudyRequest request;
    request.mutable_study()->set_display_name(name);
    *request.mutable_study()->mutable_spec() = testing::BraninSpec();
    v1::Study study;
    grpc::Status s = StubFor(token)->CreateStudy(&ctx, request, &study);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return study.name();
  }

  grpc::Status GetStudy(const std::string& token, const std::string& name) {
    grpc::ClientContext ctx;
    v1::GetStudyRequest request;
    request.set_name(name);
    v1::Study study;
    return StubFor(token)->GetStudy(&ctx, request, &study);
  }

  testing::CommandResult Cli(std::vector<std::string> args,
                             const std::string& token) {
    args.insert(args.begin(),
                {testing::BinDir() + "/cairn", "--server", server_->address()});
    return testing::RunCommand(args, {"CAIRN_TOKEN=" + token});
  }

  // `cairn audit list --json ARGS` as the admin: one object per line.
  std::vector<json> AuditList(std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"audit", "list", "--json"});
    testing::CommandResult r = Cli(args, server_->token());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<json> events;
    for (absl::string_view line :
         absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      events.push_back(json::parse(line));
    }
    return events;
  }

  // The events of `method` (short name) in `events`.
  static std::vector<json> Of(const std::vector<json>& events,
                              const std::string& method) {
    std::vector<json> of;
    for (const json& e : events) {
      if (e["method"] == kStudy + method ||
          e["method"] == "/cairn.v1.AdminService/" + method) {
        of.push_back(e);
      }
    }
    return of;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::CairndProcess> server_;
};

// REST calls reach the gRPC service in-process: the audit log records the
// HTTP client's address, and a gRPC client cannot forge it.
TEST_F(AuditIntegrationTest, RestCallsRecordTheHttpClientsAddress) {
  std::smatch m;
  const std::string log = server_->Log();
  ASSERT_TRUE(std::regex_search(
      log, m,
      std::regex("web UI and REST API on http://[^ ]+ \\(port ([0-9]+)\\)")))
      << log;
  const std::string editor = CreateToken("ed", v1::EDITOR);
  const testing::CommandResult r = testing::RunCommand(
      {"curl", "-sS", "--max-time", "5", "-H",
       "Authorization: Bearer " + editor, "--data",
       R"({"study": {"displayName": "over-rest", "spec": {
         "parameters": [{"parameterId": "x", "type": "DOUBLE", "minValue": 0,
         "maxValue": 1}], "metrics": [{"metricId": "y", "goal": "MINIMIZE"}]}}})",
       absl::StrCat("http://127.0.0.1:", m[1].str(), "/v1/studies")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(absl::StrContains(r.out, "\"over-rest\"")) << r.out;
  {  // A gRPC client naming another address in the metadata.
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-cairn-http-peer", "ipv4:203.0.113.9:1");
    v1::CreateStudyRequest request;
    request.mutable_study()->set_display_name("forged");
    *request.mutable_study()->mutable_spec() = testing::BraninSpec();
    v1::Study study;
    ASSERT_TRUE(StubFor(editor)->CreateStudy(&ctx, request, &study).ok());
  }
  std::vector<json> created = Of(AuditList(), "CreateStudy");
  ASSERT_EQ(created.size(), 2u);
  const std::string rest = created[0]["peer"], forged = created[1]["peer"];
  EXPECT_TRUE(absl::StartsWith(rest, "ipv4:127.0.0.1:")) << rest;
  EXPECT_TRUE(absl::EndsWith(rest, " (REST)")) << rest;
  EXPECT_EQ(created[0]["principal"], "ed");
  EXPECT_TRUE(absl::StartsWith(forged, "ipv4:127.0.0.1:")) << forged;
  EXPECT_FALSE(absl::StrContains(forged, "203.0.113.9")) << forged;
}

TEST_F(AuditIntegrationTest, WritesAndRefusalsAreRecordedReadsAreNot) {
  const std::string editor = CreateToken("ed", v1::EDITOR);
  const std::string viewer = CreateToken("vi", v1::VIEWER);
  const std::string study = CreateStudy(editor, "s1");
  ASSERT_TRUE(GetStudy(viewer, study).ok());
  {  // A viewer trying a write.
    grpc::ClientContext ctx;
    v1::SetStudyStateRequest request;
    request.set_name(study);
    request.set_state(v1::Study::INACTIVE);
    v1::Study out;
    EXPECT_EQ(StubFor(viewer)->SetStudyState(&ctx, request, &out).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_EQ(GetStudy("cairn_bogus", study).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  const std::vector<json> events = AuditList();
  for (const json& e : events) {
    for (const char* key :
         {"time", "principal", "role", "method", "resource", "code", "peer"}) {
      EXPECT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    }
  }
  std::vector<json> created = Of(events, "CreateStudy");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]["principal"], "ed");
  EXPECT_EQ(created[0]["role"], "editor");
  EXPECT_EQ(created[0]["resource"], study);
  EXPECT_EQ(created[0]["code"], "OK");
  EXPECT_TRUE(
      absl::StrContains(created[0]["peer"].get<std::string>(), "127.0.0.1"))
      << created[0].dump();

  std::vector<json> denied = Of(events, "SetStudyState");
  ASSERT_EQ(denied.size(), 1u);
  EXPECT_EQ(denied[0]["principal"], "vi");
  EXPECT_EQ(denied[0]["resource"], study);
  EXPECT_EQ(denied[0]["code"], "PERMISSION_DENIED");

  std::vector<json> gets = Of(events, "GetStudy");
  ASSERT_EQ(gets.size(), 1u) << "the viewer's read is not audited";
  EXPECT_EQ(gets[0]["principal"], "");
  EXPECT_EQ(gets[0]["code"], "UNAUTHENTICATED");

  std::vector<json> tokens = Of(events, "CreateToken");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0]["principal"], "admin");
  EXPECT_EQ(tokens[0]["resource"], "ed");
}

TEST_F(AuditIntegrationTest, ListIsForAdminsAndFiltersByPrincipal) {
  const std::string editor = CreateToken("ed", v1::EDITOR);
  CreateStudy(editor, "s1");
  CreateStudy(server_->token(), "s2");

  testing::CommandResult refused = Cli({"audit", "list"}, editor);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(refused.err, "PERMISSION_DENIED"))
      << refused.err;

  std::vector<json> mine = AuditList({"--principal", "ed"});
  ASSERT_EQ(mine.size(), 2u);  // The study, and the refused listing.
  EXPECT_EQ(mine[0]["method"], std::string(kStudy) + "CreateStudy");
  EXPECT_EQ(mine[1]["method"], "/cairn.v1.AdminService/ListAuditEvents");
  EXPECT_EQ(mine[1]["code"], "PERMISSION_DENIED");

  EXPECT_EQ(AuditList({"--since", "1h"}).size(), 4u);
  testing::CommandResult table = Cli({"audit", "list"}, server_->token());
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(absl::StrContains(table.out, "PRINCIPAL")) << table.out;
  EXPECT_TRUE(absl::StrContains(table.out, "StudyService/CreateStudy"))
      << table.out;
  testing::CommandResult bad =
      Cli({"audit", "list", "--since", "yesterday"}, server_->token());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(bad.err, "--since")) << bad.err;
}

// (Without --audit-reads a read is not recorded: the first test.)
class AuditReadsTest : public AuditIntegrationTest {
 protected:
  std::vector<std::string> ServerArgs() const override {
    return {"--audit-reads"};
  }
};

TEST_F(AuditReadsTest, ReadsAreRecordedWithAuditReads) {
  const std::string study = CreateStudy(server_->token(), "s1");
  ASSERT_TRUE(GetStudy(server_->token(), study).ok());
  std::vector<json> gets = Of(AuditList(), "GetStudy");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0]["principal"], "admin");
  EXPECT_EQ(gets[0]["resource"], study);
  EXPECT_EQ(gets[0]["code"], "OK");
}

TEST_F(AuditIntegrationTest, SurvivesKill9AndRetentionDeletesOldEvents) {
  const std::string study = CreateStudy(server_->token(), "s1");
  const auto written = std::chrono::steady_clock::now();
  server_->Kill9();
  StartServer();
  std::vector<json> created = Of(AuditList(), "CreateStudy");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]["resource"], study);

  server_->Kill9();
  std::this_thread::sleep_until(written + std::chrono::milliseconds(1200));
  StartServer({"--audit-retention", "1s"});
  EXPECT_TRUE(AuditList().empty()) << "older than 1 s: deleted at start";
  server_->Kill9();
  testing::CairndProcess bad(dir_.path() + "/data",
                             {"--audit-retention", "forever"});
  std::string error;
  EXPECT_FALSE(bad.Start(&error));
  EXPECT_TRUE(absl::StrContains(bad.Log(), "--audit-retention")) << bad.Log();
}

}  // namespace
}  // namespace cairn
