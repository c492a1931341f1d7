// Where cairnd finds the Python SDK (jobs/python_sdk.h) and how a job's
// environment carries it (CAIRN_PYTHON_SDK, first on PYTHONPATH).
#include "jobs/python_sdk.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "jobs/job_command.h"
#include "tests/testing/test_util.h"

namespace cairn::jobs {
namespace {

class PythonSdkTest : public ::testing::Test {
 protected:
  // <root>/bin/cairnd and <root>/lib/cairn/python/cairn/__init__.py.
  void LayOut() {
    std::filesystem::create_directories(sdk_ + "/cairn");
    std::ofstream(sdk_ + "/cairn/__init__.py") << "";
  }
  testing::TempDir dir_;
  const std::string exe_ = dir_.path() + "/bin/cairnd";
  const std::string sdk_ = dir_.path() + "/lib/cairn/python";
};

TEST_F(PythonSdkTest, FoundBesideTheBinaryOnlyWhenThePackageIsThere) {
  EXPECT_EQ(PythonSdkBeside(exe_), "");
  EXPECT_EQ(*ResolvePythonSdk("", exe_), "");
  LayOut();
  EXPECT_EQ(PythonSdkBeside(exe_), sdk_);
  EXPECT_EQ(*ResolvePythonSdk("", exe_), sdk_);
}

TEST_F(PythonSdkTest, FlagWinsAndIsChecked) {
  LayOut();
  EXPECT_EQ(*ResolvePythonSdk(sdk_ + "/", "/nowhere/cairnd"), sdk_);
  for (const std::string& bad :
       {dir_.path(), std::string("lib/cairn/python")}) {
    absl::StatusOr<std::string> r = ResolvePythonSdk(bad, exe_);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("--python-sdk: '" + bad + "'", 0), 0u)
        << r.status();
  }
}

TEST(JobEnvironmentSdkTest, SdkComesFirstOnPythonPath) {
  cairn::v1::TrialJobTemplate tmpl;
  tmpl.add_command("/usr/bin/python3");
  cairn::v1::Trial trial;
  trial.set_id(1);
  JobContext context;
  context.job_dir = "/jobs/t1";
  context.python_sdk = "/usr/lib/cairn/python";
  const std::vector<ReplicaTask> one = {ReplicaTask{}};
  std::vector<JobSpec> specs = MakeJobSpecs(tmpl, trial, context, one);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].env.at("CAIRN_PYTHON_SDK"), "/usr/lib/cairn/python");
  EXPECT_EQ(specs[0].env.at("PYTHONPATH"), "/usr/lib/cairn/python");
  (*tmpl.mutable_env())["PYTHONPATH"] = "/stage/job.package";
  specs = MakeJobSpecs(tmpl, trial, context, one);
  EXPECT_EQ(specs[0].env.at("PYTHONPATH"),
            "/usr/lib/cairn/python:/stage/job.package");
  context.python_sdk.clear();  // No SDK: the template's own path only.
  specs = MakeJobSpecs(tmpl, trial, context, one);
  EXPECT_EQ(specs[0].env.count("CAIRN_PYTHON_SDK"), 0u);
  EXPECT_EQ(specs[0].env.at("PYTHONPATH"), "/stage/job.package");
}

}  // namespace
}  // namespace cairn::jobs
