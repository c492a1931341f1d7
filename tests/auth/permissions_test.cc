// The permission table covers every RPC of StudyService and AdminService, and
// roles nest viewer < editor < admin.
#include "auth/permissions.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cairn/v1/admin_service.grpc.pb.h"
#include "cairn/v1/job_service.grpc.pb.h"
#include "cairn/v1/sagemaker.pb.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace cairn::auth {
namespace {

// A service of the generated code (named through one of its file's messages,
// so that the file is linked in).
const google::protobuf::ServiceDescriptor* Service(const std::string& name) {
  const google::protobuf::FileDescriptor* file =
      name == "cairn.v1.StudyService"
          ? cairn::v1::GetStudyRequest::descriptor()->file()
          : cairn::v1::BackupRequest::descriptor()->file();
  const google::protobuf::ServiceDescriptor* service =
      file->pool()->FindServiceByName(name);
  EXPECT_NE(service, nullptr) << name;
  return service;
}

using cairn::v1::ADMIN;
using cairn::v1::EDITOR;
using cairn::v1::VIEWER;

std::vector<std::string> ServiceMethods(
    const google::protobuf::ServiceDescriptor* service) {
  std::vector<std::string> methods;
  if (service == nullptr) return methods;  // Service() failed the test.
  for (int i = 0; i < service->method_count(); ++i) {
    methods.push_back(absl::StrCat("/", service->full_name(), "/",
                                   service->method(i)->name()));
  }
  return methods;
}

TEST(PermissionsTest, EveryRpcIsInTheTable) {
  // Links job_service.pb.cc, so its service is in the generated pool.
  ASSERT_NE(cairn::v1::SubmitTrainingJobRequest::descriptor(), nullptr);
  ASSERT_NE(cairn::v1::GetAwsAccessKeyRequest::descriptor(), nullptr);
  for (const auto* service :
       {Service("cairn.v1.StudyService"), Service("cairn.v1.AdminService"),
        Service("cairn.v1.JobService"),
        Service("cairn.v1.SageMakerKeyService")}) {
    for (const std::string& method : ServiceMethods(service)) {
      EXPECT_TRUE(RuleFor(method).has_value())
          << method << " is missing from auth/permissions.cc";
    }
  }
}

TEST(PermissionsTest, EveryTableEntryIsARealMethod) {
  ASSERT_NE(cairn::v1::SubmitTrainingJobRequest::descriptor(), nullptr);
  ASSERT_NE(cairn::v1::GetAwsAccessKeyRequest::descriptor(), nullptr);
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& method : MethodsInTable()) {
    if (absl::StartsWith(method, "/grpc.reflection.")) continue;
    const size_t slash = method.rfind('/');
    const auto* service = pool->FindServiceByName(method.substr(1, slash - 1));
    ASSERT_NE(service, nullptr) << method;
    EXPECT_NE(service->FindMethodByName(method.substr(slash + 1)), nullptr)
        << method;
  }
}

TEST(PermissionsTest, AdminServiceNeedsAdmin) {
  for (const std::string& method :
       ServiceMethods(Service("cairn.v1.AdminService"))) {
    EXPECT_EQ(RuleFor(method)->permission, Permission::kAdmin) << method;
  }
}

// The audit log records every call of a method that changes state: every
// studies.write method does, reads never do, and of the admin methods only
// the listings do not.
TEST(PermissionsTest, WritesChangeStateReadsDoNot) {
  for (const std::string& method : MethodsInTable()) {
    const MethodRule rule = *RuleFor(method);
    if (rule.permission == Permission::kWrite) {
      EXPECT_TRUE(rule.changes_state) << method;
    } else if (rule.permission == Permission::kRead) {
      EXPECT_FALSE(rule.changes_state) << method;
    }
  }
  const std::string admin = "/cairn.v1.AdminService/";
  for (const char* m : {"Backup", "CreateToken", "RevokeToken"}) {
    EXPECT_TRUE(RuleFor(admin + m)->changes_state) << m;
  }
  for (const char* m : {"ListTokens", "ListAuditEvents"}) {
    EXPECT_FALSE(RuleFor(admin + m)->changes_state) << m;
  }
}

TEST(PermissionsTest, UnknownMethodHasNoRule) {
  EXPECT_FALSE(RuleFor("/cairn.v1.StudyService/NoSuchMethod").has_value());
  EXPECT_FALSE(RuleFor("").has_value());
}

TEST(PermissionsTest, RolesNest) {
  EXPECT_TRUE(RoleAllows(VIEWER, Permission::kRead));
  EXPECT_FALSE(RoleAllows(VIEWER, Permission::kWrite));
  EXPECT_FALSE(RoleAllows(VIEWER, Permission::kAdmin));
  EXPECT_TRUE(RoleAllows(EDITOR, Permission::kRead));
  EXPECT_TRUE(RoleAllows(EDITOR, Permission::kWrite));
  EXPECT_FALSE(RoleAllows(EDITOR, Permission::kAdmin));
  EXPECT_TRUE(RoleAllows(ADMIN, Permission::kAdmin));
  EXPECT_FALSE(RoleAllows(cairn::v1::ROLE_UNSPECIFIED, Permission::kRead));
}

TEST(PermissionsTest, ParseRoleNamesTheField) {
  EXPECT_EQ(*api::ParseRole("--role", "editor"), EDITOR);
  absl::StatusOr<cairn::v1::Role> bad = api::ParseRole("--role", "root");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--role: 'root'"), std::string::npos);
}

}  // namespace
}  // namespace cairn::auth
