// Tokens in a real RocksDB store: create, list, revoke, expiry, the admin
// bootstrap file, job tokens scoped to one trial, and no secret on disk.
#include "auth/token_registry.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth/authorizer.h"
#include "auth/token.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn::auth {
namespace {

using cairn::v1::ADMIN;
using cairn::v1::EDITOR;
using cairn::v1::VIEWER;

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

class TokenRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    registry_.reset();
    store_.reset();
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(StoreOptions(), dir_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<TokenRegistry>> registry =
        TokenRegistry::Open(store_.get());
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
  }
  std::string Create(const std::string& name, cairn::v1::Role role,
                     absl::Duration ttl = absl::ZeroDuration()) {
    absl::StatusOr<CreatedToken> t = registry_->Create(name, role, ttl, kNow);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? t->secret : "";
  }

  cairn::testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TokenRegistry> registry_;
};

TEST_F(TokenRegistryTest, SecretsLookRightAndDiffer) {
  const std::string a = Create("a", VIEWER), b = Create("b", VIEWER);
  EXPECT_EQ(a.rfind("cairn_", 0), 0u);
  EXPECT_EQ(a.size(), 6u + 64u);
  EXPECT_NE(a, b);
  EXPECT_EQ(TokenSha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(TokenRegistryTest, AuthenticatesAcrossReopen) {
  const std::string secret = Create("ci", EDITOR);
  Reopen();
  absl::StatusOr<Principal> p = registry_->Authenticate(secret, kNow);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "ci");
  EXPECT_EQ(p->role, EDITOR);
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_TRUE(registry_->List()[0].has_last_use_time());
}

TEST_F(TokenRegistryTest, UnknownExpiredRevokedAreUnauthenticated) {
  const std::string short_lived = Create("short", VIEWER, absl::Seconds(10));
  const std::string revoked = Create("gone", ADMIN);
  ASSERT_TRUE(registry_->Revoke("gone").ok());
  EXPECT_EQ(registry_->Authenticate("cairn_nope", kNow).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(registry_->Authenticate(short_lived, kNow).ok());
  EXPECT_EQ(registry_->Authenticate(short_lived, kNow + absl::Seconds(10))
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(registry_->Authenticate(revoked, kNow).status().code(),
            absl::StatusCode::kUnauthenticated);
  Reopen();  // Revocation is durable.
  EXPECT_EQ(registry_->Authenticate(revoked, kNow).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(TokenRegistryTest, NamesAreUniqueAndChecked) {
  Create("ci", VIEWER);
  ASSERT_TRUE(registry_->Revoke("ci").ok());
  EXPECT_EQ(registry_->Create("ci", ADMIN, absl::ZeroDuration(), kNow)
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
  absl::Status bad =
      registry_->Create("a b", VIEWER, absl::ZeroDuration(), kNow).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("name: 'a b'"), std::string::npos) << bad;
  EXPECT_EQ(
      registry_
          ->Create("x", cairn::v1::ROLE_UNSPECIFIED, absl::ZeroDuration(), kNow)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_->Revoke("nobody").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(TokenRegistryTest, BootstrapWritesAdminTokenMode0600Once) {
  absl::StatusOr<std::string> path =
      BootstrapAdminToken(registry_.get(), dir_.path(), kNow);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir_.path() + "/admin.token");
  struct stat st;
  ASSERT_EQ(::stat(path->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(*path);
  std::string secret;
  in >> secret;
  absl::StatusOr<Principal> p = registry_->Authenticate(secret, kNow);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->role, ADMIN);
  // A second start finds the token and writes nothing.
  EXPECT_EQ(*BootstrapAdminToken(registry_.get(), dir_.path(), kNow), "");
}

TEST_F(TokenRegistryTest, StoreHoldsNoSecret) {
  std::vector<std::string> secrets = {Create("a", ADMIN), Create("b", VIEWER)};
  registry_.reset();
  store_.reset();  // Flushes and closes: everything is in the files now.
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir_.path() + "/store")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    for (const std::string& s : secrets) {
      EXPECT_EQ(bytes.str().find(s), std::string::npos) << entry.path();
      // Nor the random part alone.
      EXPECT_EQ(bytes.str().find(s.substr(6)), std::string::npos)
          << entry.path();
    }
  }
}

TEST_F(TokenRegistryTest, AuthorizerChecksRolesAndJobScope) {
  Authorizer authorizer(registry_.get(), [] { return kNow; });
  const std::string viewer = "Bearer " + Create("v", VIEWER);
  const std::string kGet = "/cairn.v1.StudyService/GetStudy";
  const std::string kCreate = "/cairn.v1.StudyService/CreateStudy";
  EXPECT_TRUE(authorizer.Authorize(viewer, kGet, "").ok());
  absl::Status denied = authorizer.Authorize(viewer, kCreate, "").status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("studies.write"), std::string::npos)
      << denied;
  EXPECT_EQ(authorizer.Authorize("", kGet, "").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(authorizer.Authorize("Basic x", kGet, "").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(authorizer.Authorize(viewer, "/x.Y/Z", "").status().code(),
            absl::StatusCode::kPermissionDenied);

  absl::StatusOr<std::string> job =
      registry_->MintTrialToken("studies/1/trials/2");
  ASSERT_TRUE(job.ok());
  const std::string bearer = "Bearer " + *job;
  const std::string kReport = "/cairn.v1.StudyService/AddTrialMeasurement";
  EXPECT_TRUE(authorizer.Authorize(bearer, kReport, "studies/1/trials/2").ok());
  EXPECT_TRUE(authorizer
                  .Authorize(bearer, "/cairn.v1.StudyService/CompleteTrial",
                             "studies/1/trials/2")
                  .ok());
  EXPECT_EQ(authorizer.Authorize(bearer, kReport, "studies/1/trials/3")
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(authorizer.Authorize(bearer, kCreate, "").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(authorizer.Authorize(bearer, kGet, "").status().code(),
            absl::StatusCode::kPermissionDenied);
  // A new attempt's token replaces the old one.
  absl::StatusOr<std::string> next =
      registry_->MintTrialToken("studies/1/trials/2");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(authorizer.Authorize(bearer, kReport, "studies/1/trials/2")
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  // Once the job has exited, its token is good for nothing.
  EXPECT_TRUE(
      authorizer.Authorize("Bearer " + *next, kReport, "studies/1/trials/2")
          .ok());
  registry_->ForgetTrialToken("studies/1/trials/2");
  registry_->ForgetTrialToken("studies/1/trials/9");  // None: nothing.
  EXPECT_EQ(
      authorizer.Authorize("Bearer " + *next, kReport, "studies/1/trials/2")
          .status()
          .code(),
      absl::StatusCode::kUnauthenticated);
}

TEST(AuthorizerTest, DisabledAllowsKnownMethodsOnly) {
  Authorizer none(nullptr);
  absl::StatusOr<Principal> p =
      none.Authorize("", "/cairn.v1.AdminService/Backup", "");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "local");
  EXPECT_FALSE(none.Authorize("", "/x.Y/Z", "").ok());
}

}  // namespace
}  // namespace cairn::auth
