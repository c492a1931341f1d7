// Link-safe opens of job dir files (jobs/job_files.h) and the template checks
// of jobs/job_template.h, without a cairnd.
#include "jobs/job_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "jobs/hypertune.h"
#include "jobs/job_template.h"
#include "tests/testing/test_util.h"

namespace cairn::jobs {
namespace {

class JobFilesTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(JobFilesTest, OpensOnlyRegularFilesWithOneLink) {
  const std::string plain = Write("plain", "hello");
  absl::StatusOr<ScopedFd> fd = OpenJobFile(plain, O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(*ReadAt(fd->get(), 1, 100), "ello");

  EXPECT_TRUE(absl::IsNotFound(
      OpenJobFile(dir_.path() + "/missing", O_RDONLY).status()));

  const std::string symlink = dir_.path() + "/link";
  std::filesystem::create_symlink(plain, symlink);
  absl::Status st = OpenJobFile(symlink, O_RDONLY).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_NE(st.message().find("symbolic link"), std::string::npos) << st;
  // Not created through a link either.
  const std::string dangling = dir_.path() + "/dangling";
  std::filesystem::create_symlink(dir_.path() + "/target", dangling);
  EXPECT_FALSE(OpenJobFile(dangling, O_WRONLY | O_CREAT, 0644).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/target"));

  const std::string hard = dir_.path() + "/hard";
  ASSERT_EQ(link(plain.c_str(), hard.c_str()), 0);
  st = OpenJobFile(hard, O_RDONLY).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;

  // A FIFO neither blocks the open nor is read.
  const std::string fifo = dir_.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenJobFile(fifo, O_RDONLY).status()));
}

TEST_F(JobFilesTest, HypertuneFileBehindALinkYieldsNothing) {
  const std::string real =
      Write("real", R"({"loss": "1", "global_step": "1", "timestamp": 5})"
                    "\n");
  ASSERT_EQ(ReadHypertuneSince(real, 0).size(), 1u);
  const std::string symlink = dir_.path() + "/hypertune.metrics";
  std::filesystem::create_symlink(real, symlink);
  EXPECT_TRUE(ReadHypertuneSince(symlink, 0).empty());
}

cairn::v1::StudySpec WithTemplate(const std::string& job_dir,
                                  const std::string& env_name) {
  cairn::v1::StudySpec spec;
  spec.mutable_job_template()->add_command("/bin/true");
  spec.mutable_job_template()->set_job_dir(job_dir);
  if (!env_name.empty()) {
    (*spec.mutable_job_template()->mutable_env())[env_name] = "v";
  }
  return spec;
}

TEST_F(JobFilesTest, TemplatesKeepToTheRootsAndTheirOwnVariables) {
  const JobRoots roots{dir_.path() + "/jobs", {dir_.path() + "/scratch"}};
  std::filesystem::create_directories(roots.jobs_root);
  std::filesystem::create_directories(roots.allowed_job_dirs[0]);
  EXPECT_TRUE(ValidateJobTemplate(roots, 0, WithTemplate("", "")).ok());
  EXPECT_TRUE(
      ValidateJobTemplate(roots, 0, WithTemplate("team/a", "PATH")).ok());
  EXPECT_TRUE(ValidateJobTemplate(
                  roots, 0, WithTemplate(dir_.path() + "/scratch/a", "HOME"))
                  .ok());
  for (const char* bad : {"LD_AUDIT", "CAIRN_SERVER", "CLOUD_ML_TRIAL_ID",
                          "CUDA_VISIBLE_DEVICES"}) {
    absl::Status st = ValidateJobTemplate(roots, 0, WithTemplate("", bad));
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << bad;
    EXPECT_NE(st.message().find(bad), std::string::npos) << st;
    EXPECT_NE(st.message().find("job_template.env"), std::string::npos) << st;
  }
  // The roots themselves, escapes and other places are refused.
  for (const std::string& bad :
       {std::string("."), std::string(".."), dir_.path() + "/scratch",
        dir_.path() + "/scratch/../jobs2", std::string("/tmp")}) {
    absl::Status st = ValidateJobTemplate(roots, 0, WithTemplate(bad, ""));
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << bad;
    EXPECT_NE(st.message().find("job_template.job_dir"), std::string::npos)
        << st;
  }
}

TEST_F(JobFilesTest, JobDirErrorsNameTheFieldTheUserWrote) {
  const JobRoots roots{dir_.path() + "/jobs", {}};
  std::filesystem::create_directories(roots.jobs_root);
  cairn::v1::StudySpec spec = WithTemplate("../out", "");
  absl::Status st = ValidateJobTemplate(roots, 0, spec);
  EXPECT_NE(st.message().find("job_template.job_dir: '../out' resolves to '" +
                              dir_.path() + "/out'"),
            std::string::npos)
      << st;
  // An AI Platform job's template came from trainingInput.jobDir.
  spec.mutable_job_template()->set_ai_platform_job_id("j1");
  st = ValidateJobTemplate(roots, 0, spec);
  EXPECT_NE(st.message().find("trainingInput.jobDir: '../out' resolves to"),
            std::string::npos)
      << st;
  EXPECT_EQ(st.message().find("job_template"), std::string::npos) << st;
}

}  // namespace
}  // namespace cairn::jobs
