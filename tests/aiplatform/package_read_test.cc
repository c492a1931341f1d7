// aiplatform/package_read.h and job_rest.h: packages read from archives on
// the server's machine (what may be read, what is left out) and the small
// facts of AI Platform's REST surface.
#include "aiplatform/package_read.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "aiplatform/job_rest.h"
#include "gtest/gtest.h"

namespace cairn::aiplatform {
namespace {

namespace fs = std::filesystem;
using cairn::v1::Job;

class PackageReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pkgread-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  // Makes dir_/NAME.tar.gz of dir_/SRC (with tar) and returns its path.
  std::string Tar(const std::string& name, const std::string& src,
                  fs::perms perms = fs::perms::owner_read |
                                    fs::perms::owner_write |
                                    fs::perms::others_read) {
    const std::string out = (dir_ / (name + ".tar.gz")).string();
    const std::string cmd =
        "tar -czf '" + out + "' -C '" + dir_.string() + "' '" + src + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    fs::permissions(out, perms);
    return out;
  }
  fs::path dir_;
};

TEST_F(PackageReadTest, ReadsAnSdistByPathOrFileUri) {
  Write("trainer-0.1/setup.py", "setup()\n");
  Write("trainer-0.1/trainer/task.py", "print(1)\n");
  const std::string archive = Tar("trainer-0.1", "trainer-0.1");
  for (const std::string& uri : {archive, "file://" + archive}) {
    cairn::v1::TrainingInput input;
    input.set_python_module("trainer.task");
    input.add_package_uris(uri);
    absl::StatusOr<PackageFileList> files = ReadPackageUris(input);
    ASSERT_TRUE(files.ok()) << files.status();
    ASSERT_EQ(files->size(), 2u);
    std::set<std::string> paths;
    for (const auto& f : *files) paths.insert(f.path());
    EXPECT_EQ(paths, (std::set<std::string>{"setup.py", "trainer/task.py"}));
  }
}

TEST_F(PackageReadTest, RefusesWhatItMayNotRead) {
  Write("p/trainer/task.py", "print(1)\n");
  const std::string owner_only =
      Tar("owner_only", "p", fs::perms::owner_read | fs::perms::owner_write);
  const struct {
    std::string uri;
    std::string says;
  } cases[] = {
      {"gs://bucket/trainer.tar.gz", "is not an absolute local path"},
      {"trainer.tar.gz", "is not an absolute local path"},
      {(dir_ / "missing.tar.gz").string(), "is not a file"},
      {dir_.string(), "is not a file"},
      {owner_only, "is not readable by everyone"},
  };
  for (const auto& c : cases) {
    cairn::v1::TrainingInput input;
    input.set_python_module("trainer.task");
    input.add_package_uris(c.uri);
    absl::StatusOr<PackageFileList> files = ReadPackageUris(input);
    ASSERT_FALSE(files.ok()) << c.uri;
    EXPECT_EQ(files.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(files.status().message());
    EXPECT_NE(message.find("trainingInput.packageUris[0]: '" + c.uri + "'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << message;
  }
}

TEST_F(PackageReadTest, LeavesOutSymbolicLinksInAnArchive) {
  Write("p/trainer/task.py", "print(1)\n");
  fs::create_symlink("/etc/passwd", dir_ / "p" / "trainer" / "passwd");
  cairn::v1::TrainingInput input;
  input.set_python_module("trainer.task");
  input.add_package_uris(Tar("links", "p"));
  absl::StatusOr<PackageFileList> files = ReadPackageUris(input);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path(), "trainer/task.py");
}

TEST(JobRestTest, ListPageSizeAsAiPlatform) {
  EXPECT_EQ(ParseListPageSize("").value_or(-1), 20);
  EXPECT_EQ(ParseListPageSize("0").value_or(-1), 20);
  EXPECT_EQ(ParseListPageSize("7").value_or(-1), 7);
  EXPECT_EQ(ParseListPageSize("1000").value_or(-1), 100);
  for (const char* bad : {"-1", "x", "1.5"}) {
    absl::StatusOr<int> s = ParseListPageSize(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.status().message().find(absl::StrCat("pageSize: '", bad, "'")),
              absl::string_view::npos);
  }
}

TEST(JobRestTest, ProjectIsRecordedAsALabel) {
  Job job;
  ASSERT_TRUE(SetJobProject("my-project", job).ok());
  EXPECT_EQ(job.labels().at(kProjectLabel), "my-project");
  ASSERT_TRUE(SetJobProject("my-project", job).ok());
  absl::Status other = SetJobProject("another", job);
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("labels.aiplatform_project"),
            absl::string_view::npos);
  Job fresh;
  EXPECT_FALSE(SetJobProject("a/b", fresh).ok());
  EXPECT_FALSE(SetJobProject("", fresh).ok());
  EXPECT_FALSE(SetJobProject(std::string(64, 'a'), fresh).ok());
}

}  // namespace
}  // namespace cairn::aiplatform
