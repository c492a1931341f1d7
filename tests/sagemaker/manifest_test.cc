// ManifestFile channels: the manifest parser's refusals of hostile input
// (not JSON, not the format, "..", absolute, empty segments, duplicates,
// too many keys) and their resolution on a real object root in a temp dir
// (prefix outside the root or in a missing bucket, objects missing or not
// regular files, a manifest linked from outside or too large), and the mounts
// that present exactly the listed files.
#include "sagemaker/manifest.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sagemaker/channel_mounts.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kUri[] = "s3://my-bucket/train.manifest";

// The message of a refusal of `text`, or "" when it parses.
std::string Refusal(const std::string& text) {
  absl::StatusOr<Manifest> m = ParseManifest(kUri, text);
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(m.status().message().size(), 1024u);
  EXPECT_THAT(m.status().message(), HasSubstr(kUri));
  return std::string(m.status().message());
}

TEST(ParseManifestTest, GoodManifest) {
  absl::StatusOr<Manifest> m = ParseManifest(
      kUri, R"([{"prefix": "s3://my-bucket/data/"}, "a.csv", "sub/c.csv"])");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->prefix, "s3://my-bucket/data/");
  EXPECT_THAT(m->keys, ::testing::ElementsAre("a.csv", "sub/c.csv"));
}

TEST(ParseManifestTest, RefusesHostileEntriesNamingThem) {
  const std::string p = R"([{"prefix": "s3://my-bucket/data/"}, )";
  struct Case {
    std::string text;
    const char* says;
  } cases[] = {
      {"not json", "is not JSON"},
      {"{}", "must be a JSON array"},
      {R"([{"prefix": "s3://my-bucket/data/"}])", "must be a JSON array"},
      {R"(["a.csv", "b.csv"])", "the first element must be"},
      {R"([{"prefix": "s3://my-bucket/", "x": 1}, "a"])", "first element"},
      {R"([{"prefix": "/etc/"}, "passwd"])", "only s3://"},
      {R"([{"prefix": "s3://my-bucket/../"}, "a"])", "'..'"},
      {p + R"("a.csv", "../../etc/passwd"])", "entry 2 '../../etc/passwd'"},
      {p + R"("sub/../../x"])", "'..' segment"},
      {p + R"("/etc/passwd"])", "entry 1 '/etc/passwd' must be relative"},
      {p + R"(""])", "entry 1 '' is empty"},
      {p + R"("a//b"])", "empty, '.' or '..' segment"},
      {p + R"("dir/"])", "empty, '.' or '..' segment"},
      {p + R"("./a"])", "empty, '.' or '..' segment"},
      {p + R"("a,ro=false"])", "','"},
      {p + R"("a\nb"])", "control character"},
      {p + R"(7])", "entry 1 '7' is not a string"},
      {p + R"(["a"]])", "is not a string"},
      {p + R"("a.csv", "a.csv"])", "entry 2 'a.csv' is listed twice"},
      {p + R"("a", "a/b"])", "entry 2 'a/b' is both a file and"},
      {p + R"("a/b", "a"])", "entry 2 'a' is both a file and"},
      {p + std::string(5000, '[') + std::string(5001, ']'),
       "must be a JSON array"},
      {p + std::string(5000, '[') + "]", "is not JSON"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Refusal(c.text), HasSubstr(c.says)) << c.text;
  }
}

TEST(ParseManifestTest, AtMostTheLimitOfKeys) {
  std::string text = R"([{"prefix": "s3://my-bucket/data/"})";
  for (size_t i = 0; i < kMaxManifestEntries; ++i) {
    absl::StrAppend(&text, ", \"f", i, "\"");
  }
  EXPECT_EQ(Refusal(text + "]"), "");
  EXPECT_THAT(Refusal(text + ", \"one-more\"]"),
              HasSubstr("lists 1001 keys; at most 1000"));
}

class ResolveManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / "manifest_test";
    fs::remove_all(root_);
    fs::create_directories(root_ / "my-bucket/data/sub");
    fs::create_directories(root_ / "my-bucket/data/dir");
    for (const char* f : {"a.csv", "b.csv", "sub/c.csv"}) {
      Write(root_ / "my-bucket/data" / f, f);
    }
    const fs::path outside = root_.parent_path() / "manifest_test_outside";
    fs::create_directories(outside);
    Write(outside / "secret", "secret");
    fs::create_directory_symlink(outside, root_ / "my-bucket/escape");
  }

  static void Write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  // Writes the manifest `text` at kUri and resolves it.
  absl::StatusOr<std::vector<ManifestObject>> Resolve(const std::string& text) {
    Write(root_ / "my-bucket/train.manifest", text);
    return ResolveManifest(ObjectRoot(root_.string()), kUri);
  }

  fs::path root_;
};

TEST_F(ResolveManifestTest, ListedObjectsAtTheirKeys) {
  absl::StatusOr<std::vector<ManifestObject>> got =
      Resolve(R"([{"prefix": "s3://my-bucket/data/"}, "a.csv", "sub/c.csv"])");
  ASSERT_TRUE(got.ok()) << got.status();
  const fs::path data = fs::canonical(root_ / "my-bucket/data");
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].path, (data / "a.csv").string());
  EXPECT_EQ((*got)[0].key, "a.csv");
  EXPECT_EQ((*got)[1].path, (data / "sub/c.csv").string());
  EXPECT_EQ((*got)[1].key, "sub/c.csv");
}

TEST_F(ResolveManifestTest, RefusesWhatTheRootDoesNotHold) {
  struct Case {
    std::string text;
    const char* says;
  } cases[] = {
      {R"([{"prefix": "s3://no-bucket/"}, "a.csv"])",
       "bucket 'no-bucket' does not exist"},
      {R"([{"prefix": "s3://my-bucket/escape/"}, "secret"])",
       "prefix 's3://my-bucket/escape/': the path leads outside the object "
       "root"},
      {R"([{"prefix": "s3://my-bucket/"}, "data/a.csv", "escape/secret"])",
       "entry 2 'escape/secret' its object 's3://my-bucket/escape/secret': "
       "the path leads outside the object root"},
      {R"([{"prefix": "s3://my-bucket/data/"}, "a.csv", "gone.csv"])",
       "entry 2 'gone.csv' is not a regular file"},
      {R"([{"prefix": "s3://my-bucket/data/"}, "dir"])",
       "entry 1 'dir' is not a regular file"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<ManifestObject>> got = Resolve(c.text);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(got.status().message());
    EXPECT_THAT(message, HasSubstr(c.says));
    EXPECT_THAT(message, HasSubstr(kUri));
  }
}

TEST_F(ResolveManifestTest, ManifestInsideTheRootAndBounded) {
  const ObjectRoot objects(root_.string());
  fs::create_symlink(root_.parent_path() / "manifest_test_outside/secret",
                     root_ / "my-bucket/link.manifest");
  EXPECT_THAT(ResolveManifest(objects, "s3://my-bucket/link.manifest")
                  .status()
                  .message(),
              HasSubstr("outside the object root"));
  Write(root_ / "my-bucket/big.manifest",
        std::string(kMaxManifestBytes + 1, ' '));
  EXPECT_THAT(ResolveManifest(objects, "s3://my-bucket/big.manifest")
                  .status()
                  .message(),
              HasSubstr("is larger than 1048576 bytes"));
  EXPECT_THAT(
      ResolveManifest(objects, "s3://my-bucket/missing").status().message(),
      HasSubstr("cannot open it"));
  EXPECT_THAT(
      ResolveManifest(objects, "s3://my-bucket/data").status().message(),
      HasSubstr("is not a regular file"));
}

TEST_F(ResolveManifestTest, ChannelMountsPresentExactlyTheListedFiles) {
  Write(root_ / "my-bucket/train.manifest",
        R"([{"prefix": "s3://my-bucket/data/"}, "a.csv", "sub/c.csv"])");
  cairn::v1::SageMakerChannel channel;
  channel.set_channel_name("train");
  auto* s3 = channel.mutable_data_source()->mutable_s3_data_source();
  s3->set_s3_data_type("ManifestFile");
  s3->set_s3_uri(kUri);
  const ObjectRoot objects(root_.string());
  EXPECT_TRUE(CheckChannel(objects, channel).ok());
  absl::StatusOr<std::vector<jobs::ContainerMount>> mounts =
      ChannelMounts(objects, channel);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  const fs::path data = fs::canonical(root_ / "my-bucket/data");
  ASSERT_EQ(mounts->size(), 2u);
  EXPECT_EQ((*mounts)[0].host_path, (data / "a.csv").string());
  EXPECT_EQ((*mounts)[0].container_path, "/opt/ml/input/data/train/a.csv");
  EXPECT_TRUE((*mounts)[0].read_only);
  EXPECT_EQ((*mounts)[1].container_path, "/opt/ml/input/data/train/sub/c.csv");
  // As an S3Prefix the same URI is no directory; a manifest of "..", refused
  // at create and at start alike.
  s3->set_s3_data_type("S3Prefix");
  s3->set_s3_uri("s3://my-bucket/data/");
  mounts = ChannelMounts(objects, channel);
  ASSERT_TRUE(mounts.ok()) << mounts.status();
  EXPECT_EQ(mounts->size(), 1u);
  EXPECT_EQ((*mounts)[0].container_path, "/opt/ml/input/data/train");
  s3->set_s3_data_type("ManifestFile");
  s3->set_s3_uri(kUri);
  Write(root_ / "my-bucket/train.manifest",
        R"([{"prefix": "s3://my-bucket/data/"}, "../train.manifest"])");
  EXPECT_THAT(CheckChannel(objects, channel).message(), HasSubstr("'..'"));
  EXPECT_THAT(ChannelMounts(objects, channel).status().message(),
              HasSubstr("'..'"));
}

}  // namespace
}  // namespace cairn::sagemaker
