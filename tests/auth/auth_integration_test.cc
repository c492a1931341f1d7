// A real cairnd on loopback with authentication on (the default): every RPC
// for every kind of caller (table-driven), the admin token file, editors and
// the studies they created, the token CLI, and --auth=none's loopback rule.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "auth/client_token.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "cairn/v1/sagemaker.grpc.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/empty_call.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

// A service of the generated descriptor pool (linked in with its stubs).
const google::protobuf::ServiceDescriptor* Service(const std::string& name) {
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      name);
}

namespace v1 = cairn::v1;

// The least role each RPC needs, written down here independently of
// auth/permissions.cc. A new RPC fails EveryMethodIsListedHere until it is
// added to both.
const std::map<std::string, v1::Role>& ExpectedRoles() {
  static const auto* roles = new std::map<std::string, v1::Role>{
      {"/cairn.v1.StudyService/CreateStudy", v1::EDITOR},
      {"/cairn.v1.StudyService/GetStudy", v1::VIEWER},
      {"/cairn.v1.StudyService/ListStudies", v1::VIEWER},
      {"/cairn.v1.StudyService/LookupStudy", v1::VIEWER},
      {"/cairn.v1.StudyService/DeleteStudy", v1::EDITOR},
      {"/cairn.v1.StudyService/SetStudyState", v1::EDITOR},
      {"/cairn.v1.StudyService/UpdateStudyLabels", v1::EDITOR},
      {"/cairn.v1.StudyService/SuggestTrials", v1::EDITOR},
      {"/cairn.v1.StudyService/CreateTrial", v1::EDITOR},
      {"/cairn.v1.StudyService/GetTrial", v1::VIEWER},
      {"/cairn.v1.StudyService/ListTrials", v1::VIEWER},
      {"/cairn.v1.StudyService/DeleteTrial", v1::EDITOR},
      {"/cairn.v1.StudyService/AddTrialMeasurement", v1::EDITOR},
      {"/cairn.v1.StudyService/ReportMeasurements", v1::EDITOR},
      {"/cairn.v1.StudyService/CompleteTrial", v1::EDITOR},
      {"/cairn.v1.StudyService/StopTrial", v1::EDITOR},
      {"/cairn.v1.StudyService/CheckTrialEarlyStoppingState", v1::VIEWER},
      {"/cairn.v1.StudyService/ListOptimalTrials", v1::VIEWER},
      {"/cairn.v1.StudyService/GetMetricHistory", v1::VIEWER},
      {"/cairn.v1.StudyService/ReadTrialLogs", v1::VIEWER},
      {"/cairn.v1.AdminService/Backup", v1::ADMIN},
      {"/cairn.v1.AdminService/CreateToken", v1::ADMIN},
      {"/cairn.v1.AdminService/ListTokens", v1::ADMIN},
      {"/cairn.v1.AdminService/RevokeToken", v1::ADMIN},
      {"/cairn.v1.AdminService/ListAuditEvents", v1::ADMIN},
      {"/cairn.v1.SageMakerKeyService/GetAwsAccessKey", v1::ADMIN},
  };
  return *roles;
}

std::string SourceDir() {
  const char* dir = std::getenv("CAIRN_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

class AuthIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server_.Start(&error)) << error;
    ASSERT_FALSE(server_.token().empty()) << "no admin.token written";
    admin_ = v1::AdminService::NewStub(server_.NewChannel());
  }

  std::string CreateToken(const std::string& name, v1::Role role,
                          int64_t ttl_seconds = 0) {
    grpc::ClientContext ctx;
    v1::CreateTokenRequest request;
    request.set_name(name);
    request.set_role(role);
    request.mutable_ttl()->set_seconds(ttl_seconds);
    v1::CreateTokenResponse response;
    grpc::Status s = admin_->CreateToken(&ctx, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.secret();
  }

  std::unique_ptr<v1::StudyService::Stub> StubFor(const std::string& token) {
    return v1::StudyService::NewStub(
        auth::NewAuthChannel(server_.address(), token));
  }

  testing::CommandResult Cli(std::vector<std::string> args,
                             const std::string& token) {
    args.insert(args.begin(),
                {testing::BinDir() + "/cairn", "--server", server_.address()});
    return testing::RunCommand(args, {"CAIRN_TOKEN=" + token});
  }

  testing::TempDir dir_;
  testing::CairndProcess server_{dir_.path() + "/data"};
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

TEST_F(AuthIntegrationTest, EveryMethodIsListedHere) {
  ASSERT_NE(v1::GetAwsAccessKeyRequest::descriptor(), nullptr);  // Linked in.
  for (const auto* service :
       {Service("cairn.v1.StudyService"), Service("cairn.v1.AdminService"),
        Service("cairn.v1.SageMakerKeyService")}) {
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string method = absl::StrCat("/", service->full_name(), "/",
                                              service->method(i)->name());
      EXPECT_TRUE(ExpectedRoles().count(method)) << method;
    }
  }
}

TEST_F(AuthIntegrationTest, EveryRpcForEveryCaller) {
  std::map<v1::Role, std::string> by_role = {
      {v1::VIEWER, CreateToken("viewer", v1::VIEWER)},
      {v1::EDITOR, CreateToken("editor", v1::EDITOR)},
      {v1::ADMIN, CreateToken("admin2", v1::ADMIN)}};
  const std::string revoked = CreateToken("revoked", v1::ADMIN);
  {
    grpc::ClientContext ctx;
    v1::RevokeTokenRequest request;
    request.set_name("revoked");
    v1::Token token;
    ASSERT_TRUE(admin_->RevokeToken(&ctx, request, &token).ok());
  }
  const std::string expired = CreateToken("expired", v1::ADMIN, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::map<std::string, std::string> unauthenticated = {
      {"no token", ""},
      {"unknown token", "cairn_0000"},
      {"revoked token", revoked},
      {"expired token", expired}};

  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(
      server_.address(), grpc::InsecureChannelCredentials());
  for (const auto& [method, least] : ExpectedRoles()) {
    for (const auto& [who, token] : unauthenticated) {
      grpc::Status s = testing::CallWithEmptyRequest(channel, method, token);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " with " << who << ": " << s.error_message();
    }
    for (const auto& [role, token] : by_role) {
      grpc::Status s = testing::CallWithEmptyRequest(channel, method, token);
      if (role >= least) {
        EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << method << " as role " << role << ": " << s.error_message();
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << method << " as role " << role << ": " << s.error_message();
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << method << " as role " << role;
        const char* permission =
            least == v1::ADMIN ? "permission admin" : "permission studies.";
        EXPECT_TRUE(absl::StrContains(s.error_message(), permission))
            << method << ": " << s.error_message();
      }
    }
  }
}

TEST_F(AuthIntegrationTest, HealthStaysOpen) {
  grpc::Status s = testing::CallWithEmptyRequest(
      grpc::CreateChannel(server_.address(),
                          grpc::InsecureChannelCredentials()),
      "/grpc.health.v1.Health/Check", "");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// One reflection exchange on a fresh stream with `token` (none if empty):
// the stream's status, and the answer when there was one.
grpc::Status Reflect(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
    const grpc::reflection::v1alpha::ServerReflectionRequest& request,
    grpc::reflection::v1alpha::ServerReflectionResponse* out) {
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  auto stream = stub->ServerReflectionInfo(&ctx);
  stream->Write(request);
  stream->WritesDone();
  stream->Read(out);
  return stream->Finish();
}

TEST_F(AuthIntegrationTest, ReflectionNeedsAViewerAndDescribesTheApi) {
  namespace rv = grpc::reflection::v1alpha;
  auto channel = grpc::CreateChannel(server_.address(),
                                     grpc::InsecureChannelCredentials());
  rv::ServerReflectionRequest list;
  list.set_list_services("");
  rv::ServerReflectionResponse out;
  grpc::Status s = Reflect(channel, "", list, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
  EXPECT_EQ(out.list_services_response().service_size(), 0);

  const std::string viewer = CreateToken("reflect", v1::VIEWER);
  s = Reflect(channel, viewer, list, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<std::string> names;
  for (const auto& service : out.list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "cairn.v1.StudyService", "cairn.v1.AdminService",
                       "cairn.v1.JobService", "cairn.v1.SageMakerKeyService",
                       "grpc.reflection.v1alpha.ServerReflection"}));

  rv::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("cairn.v1.StudyService");
  ASSERT_TRUE(Reflect(channel, viewer, symbol, &out).ok());
  // The file and what it imports, imports first: enough to build a pool.
  google::protobuf::DescriptorPool pool;
  const google::protobuf::FileDescriptor* last = nullptr;
  for (const std::string& bytes :
       out.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto proto;
    ASSERT_TRUE(proto.ParseFromString(bytes));
    last = pool.BuildFile(proto);
    ASSERT_NE(last, nullptr) << proto.name();
  }
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->name(), "cairn/v1/study_service.proto");
  ASSERT_NE(pool.FindServiceByName("cairn.v1.StudyService"), nullptr);
  EXPECT_NE(pool.FindMethodByName("cairn.v1.StudyService.SuggestTrials"),
            nullptr);

  symbol.set_file_containing_symbol("no.such.Symbol");
  ASSERT_TRUE(Reflect(channel, viewer, symbol, &out).ok());
  EXPECT_EQ(out.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

TEST_F(AuthIntegrationTest, AdminTokenFileIsPrivateAndStoreHasNoSecret) {
  struct stat st;
  ASSERT_EQ(::stat((dir_.path() + "/data/admin.token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(absl::StartsWith(server_.token(), "cairn_"));
  const std::string viewer = CreateToken("v", v1::VIEWER);
  ASSERT_EQ(server_.Terminate(), 0);
  // Nothing under the store (WAL, tables, logs) holds a secret.
  testing::CommandResult grep = testing::RunCommand(
      {"grep", "-rlaF", "-e", server_.token().substr(6), "-e", viewer.substr(6),
       dir_.path() + "/data/store"});
  EXPECT_EQ(grep.exit_code, 1) << "secret found in: " << grep.out;
  // A restart keeps the tokens and writes no new admin token.
  std::string error;
  ASSERT_TRUE(server_.Start(&error)) << error;
  grpc::ClientContext ctx;
  v1::ListStudiesResponse response;
  EXPECT_TRUE(StubFor(viewer)
                  ->ListStudies(&ctx, v1::ListStudiesRequest(), &response)
                  .ok());
}

TEST_F(AuthIntegrationTest, EditorDeletesOnlyWhatItCreated) {
  auto editor = StubFor(CreateToken("ed", v1::EDITOR));
  auto admin = server_.NewStub();
  auto create = [](v1::StudyService::Stub& stub, const std::string& name) {
    grpc::ClientContext ctx;
    v1::CreateStudyRequest request;
    request.mutable_study()->set_display_name(name);
    *request.mutable_study()->mutable_spec() = testing::BraninSpec();
    request.mutable_study()->set_creator("forged");
    v1::Study study;
    EXPECT_TRUE(stub.CreateStudy(&ctx, request, &study).ok());
    return study;
  };
  const v1::Study mine = create(*editor, "mine");
  const v1::Study theirs = create(*admin, "theirs");
  EXPECT_EQ(mine.creator(), "ed");
  EXPECT_EQ(theirs.creator(), "admin");
  auto remove = [](v1::StudyService::Stub& stub, const std::string& name) {
    grpc::ClientContext ctx;
    v1::DeleteStudyRequest request;
    request.set_name(name);
    google::protobuf::Empty empty;
    return stub.DeleteStudy(&ctx, request, &empty);
  };
  {  // Nor a trial of someone else's study.
    grpc::ClientContext ctx;
    v1::SuggestTrialsRequest request;
    request.set_parent(theirs.name());
    v1::SuggestTrialsResponse suggested;
    ASSERT_TRUE(editor->SuggestTrials(&ctx, request, &suggested).ok());
    ASSERT_EQ(suggested.trials_size(), 1);
    grpc::ClientContext ctx2;
    v1::DeleteTrialRequest del;
    del.set_name(suggested.trials(0).name());
    google::protobuf::Empty empty;
    grpc::Status s = editor->DeleteTrial(&ctx2, del, &empty);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << s.error_message();
  }
  grpc::Status denied = remove(*editor, theirs.name());
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(absl::StrContains(denied.error_message(), "permission admin"))
      << denied.error_message();
  EXPECT_TRUE(remove(*editor, mine.name()).ok());
  EXPECT_TRUE(remove(*admin, theirs.name()).ok());
}

TEST_F(AuthIntegrationTest, TokenCli) {
  const std::string admin = server_.token();
  testing::CommandResult created = Cli({"token", "create", "--name", "ci",
                                        "--role", "viewer", "--expires", "30d"},
                                       admin);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string secret = created.out.substr(0, created.out.size() - 1);
  EXPECT_EQ(created.out, secret + "\n");  // The token alone, one line.
  EXPECT_TRUE(absl::StartsWith(secret, "cairn_"));

  testing::CommandResult dup =
      Cli({"token", "create", "--name", "ci", "--role", "admin"}, admin);
  EXPECT_NE(dup.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(dup.err, "ALREADY_EXISTS")) << dup.err;

  testing::CommandResult list = Cli({"token", "list"}, admin);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(absl::StrContains(list.out, "LAST USED")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "ci  ")) << list.out;
  EXPECT_TRUE(absl::StrContains(list.out, "viewer")) << list.out;
  EXPECT_FALSE(absl::StrContains(list.out, "cairn_")) << list.out;

  // The viewer reads but cannot write, nor manage tokens.
  EXPECT_EQ(Cli({"study", "list"}, secret).exit_code, 0);
  testing::CommandResult write =
      Cli({"study", "create", "--config",
           SourceDir() + "/examples/studies/branin.yaml"},
          secret);
  EXPECT_NE(write.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(write.err, "PERMISSION_DENIED")) << write.err;
  EXPECT_TRUE(absl::StrContains(write.err, "studies.write")) << write.err;
  EXPECT_NE(Cli({"token", "list"}, secret).exit_code, 0);

  // --token-file, when $CAIRN_TOKEN is unset.
  const std::string file = dir_.path() + "/viewer.token";
  {
    std::ofstream out(file);
    out << secret << "\n";
  }
  testing::CommandResult from_file = testing::RunCommand(
      {testing::BinDir() + "/cairn", "--server", server_.address(),
       "--token-file", file, "study", "list"},
      {"CAIRN_TOKEN="});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;

  testing::CommandResult revoke = Cli({"token", "revoke", "ci"}, admin);
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  testing::CommandResult after = Cli({"study", "list"}, secret);
  EXPECT_NE(after.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(after.err, "UNAUTHENTICATED")) << after.err;
  EXPECT_TRUE(absl::StrContains(Cli({"token", "list"}, admin).out, "revoked"));
}

TEST(AuthNoneTest, RefusedWithNonLoopbackListen) {
  testing::TempDir dir;
  testing::CommandResult r = testing::RunCommand(
      {testing::BinDir() + "/cairnd", "--data-dir", dir.path() + "/data",
       "--listen", "0.0.0.0:0", "--metrics-listen", "", "--auth=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "--auth=none")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "0.0.0.0:0")) << r.err;
}

TEST(AuthNoneTest, LoopbackServesWithoutToken) {
  testing::TempDir dir;
  testing::CairndProcess server(dir.path() + "/data", {"--auth=none"});
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  EXPECT_TRUE(server.token().empty());
  grpc::Status s = testing::CallWithEmptyRequest(
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()),
      "/cairn.v1.StudyService/ListStudies", "");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// One port, one server: a second cairnd on a port in use fails to start
// (no SO_REUSEPORT splitting the traffic between two stores).
TEST(OnePortTest, SecondCairndOnTheSamePortIsRefused) {
  testing::TempDir dir;
  testing::CairndProcess first(dir.path() + "/a");
  std::string error;
  ASSERT_TRUE(first.Start(&error)) << error;
  testing::CommandResult second = testing::RunCommand(
      {testing::BinDir() + "/cairnd", "--data-dir", dir.path() + "/b",
       "--listen", first.address(), "--metrics-listen", ""});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(second.err, "--listen")) << second.err;
}

}  // namespace
}  // namespace cairn
