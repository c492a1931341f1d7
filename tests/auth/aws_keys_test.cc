// AWS key pairs of tokens: the server key file (created 0600, reread, a
// loose mode refused), pairs stable across reopening and distinct per
// token, lookup by key id, and the session secret that acts as the token
// until it is revoked.
#include "auth/aws_keys.h"

#include <sys/stat.h>

#include <filesystem>

#include "auth/token_registry.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn::auth {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

TEST(AwsKeysTest, KeyFileAndPairs) {
  cairn::testing::TempDir dir;
  const std::string path = dir.path() + "/aws-keys.key";
  auto keys = AwsKeys::Open(path);
  ASSERT_TRUE(keys.ok()) << keys.status();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  cairn::v1::Token a, b;
  a.set_name("alice");
  a.mutable_create_time()->set_seconds(1700000000);
  b.set_name("bob");
  b.mutable_create_time()->set_seconds(1700000000);
  const AwsKeyPair pa = (*keys)->For(a);
  EXPECT_EQ(pa.access_key_id.size(), 20u);
  EXPECT_EQ(pa.access_key_id.substr(0, 5), "CAIRN");
  EXPECT_EQ(pa.secret_access_key.size(), 40u);
  EXPECT_NE((*keys)->For(b).access_key_id, pa.access_key_id);
  EXPECT_NE((*keys)->For(b).secret_access_key, pa.secret_access_key);

  auto again = AwsKeys::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->For(a).secret_access_key, pa.secret_access_key);
  auto found = (*again)->Find(pa.access_key_id, {b, a});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->name(), "alice");
  EXPECT_FALSE((*again)->Find("CAIRN000000000000000", {a, b}).has_value());

  // Another server key: other pairs.
  auto other = AwsKeys::Open(dir.path() + "/other.key");
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)->For(a).secret_access_key, pa.secret_access_key);

  chmod(path.c_str(), 0644);
  auto loose = AwsKeys::Open(path);
  ASSERT_FALSE(loose.ok());
  EXPECT_NE(loose.status().message().find("chmod 600"), std::string::npos);
}

TEST(AwsKeysTest, SessionSecretActsAsTheTokenUntilRevoked) {
  cairn::testing::TempDir dir;
  auto store = Store::Open(StoreOptions(), dir.path() + "/store");
  ASSERT_TRUE(store.ok());
  auto registry = TokenRegistry::Open(store->get());
  ASSERT_TRUE(registry.ok());
  ASSERT_TRUE(
      (*registry)
          ->Create("viewer1", cairn::v1::VIEWER, absl::ZeroDuration(), kNow)
          .ok());
  auto session = (*registry)->SessionSecret("viewer1");
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(*(*registry)->SessionSecret("viewer1"), *session);
  auto who = (*registry)->Authenticate(*session, kNow);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->name, "viewer1");
  EXPECT_EQ(who->role, cairn::v1::VIEWER);
  EXPECT_EQ((*registry)->Identify(*session)->name, "viewer1");
  EXPECT_EQ((*registry)->SessionSecret("nobody").status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE((*registry)->Revoke("viewer1").ok());
  EXPECT_EQ((*registry)->Authenticate(*session, kNow).status().code(),
            absl::StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace cairn::auth
