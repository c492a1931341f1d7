// s3:// URIs on a local object root: the mapping and every refusal
// (outside the root, "..", a symbolic link out, a missing bucket).
#include "sagemaker/object_root.h"

#include <filesystem>

#include "gtest/gtest.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

class ObjectRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / "object_root_test";
    fs::remove_all(root_);
    fs::create_directories(root_ / "my-bucket" / "data");
    fs::create_directories(root_.parent_path() / "object_root_outside");
    fs::create_directory_symlink(root_.parent_path() / "object_root_outside",
                                 root_ / "my-bucket" / "escape");
  }
  fs::path root_;
};

TEST_F(ObjectRootTest, MapsBucketAndKey) {
  ObjectRoot objects(root_.string());
  const fs::path canon = fs::canonical(root_);
  absl::StatusOr<std::string> p =
      objects.Resolve("S3Uri", "s3://my-bucket/data/train/");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (canon / "my-bucket/data/train/").string());
  p = objects.Resolve("S3OutputPath", "s3://my-bucket/out");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, (canon / "my-bucket/out").string());
  p = objects.Resolve("S3OutputPath", "s3://my-bucket");
  ASSERT_TRUE(p.ok()) << p.status();
}

TEST_F(ObjectRootTest, RefusesEscapesAndMissingBuckets) {
  ObjectRoot objects(root_.string());
  struct Case {
    const char* uri;
    const char* says;
  } cases[] = {
      {"s3://my-bucket/../x", "'..'"},
      {"s3://my-bucket/data/./x", "'..'"},
      {"s3://my-bucket/escape/secret", "outside the object root"},
      {"s3://no-bucket/x", "bucket 'no-bucket' does not exist"},
      {"https://my-bucket/x", "only s3://"},
      {"/etc/passwd", "only s3://"},
      {"s3://UPPER/x", "bucket must be"},
      {"s3://../x", "bucket must be"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> p = objects.Resolve("S3Uri", c.uri);
    ASSERT_FALSE(p.ok()) << c.uri;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.says), std::string::npos)
        << p.status();
    EXPECT_NE(p.status().message().find("S3Uri"), std::string::npos);
  }
}

TEST_F(ObjectRootTest, NoRootRefusesEverything) {
  absl::StatusOr<std::string> p =
      ObjectRoot("").Resolve("S3Uri", "s3://my-bucket/data");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--object-root"), std::string::npos);
}

TEST_F(ObjectRootTest, LocalDirsMustLieInsideTheRoot) {
  ObjectRoot objects(root_.string());
  absl::StatusOr<std::string> p = objects.ResolveLocalDir(
      "DirectoryPath", (root_ / "my-bucket/data").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, fs::canonical(root_ / "my-bucket/data").string());
  for (const fs::path& bad :
       {fs::path("/etc"), root_ / "my-bucket/escape", root_ / "missing"}) {
    p = objects.ResolveLocalDir("DirectoryPath", bad.string());
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(p.status().message().find("DirectoryPath"), std::string::npos);
  }
  EXPECT_FALSE(ObjectRoot("").ResolveLocalDir("DirectoryPath", "/tmp").ok());
}

}  // namespace
}  // namespace cairn::sagemaker
