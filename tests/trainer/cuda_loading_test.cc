// cairn-train loads CUDA only for the CUDA backend: a CPU run maps neither
// the CUDA module nor libcudart/libcublas (checked with the dynamic loader's
// own trace, LD_DEBUG=files, of a real cairn-train child), --backend=cuda
// loads them, and a missing module is a clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/testing/test_util.h"
#include "tests/trainer/test_util.h"
#include "trainer/cuda_loader.h"

namespace cairn::trainer {
namespace {

using ::cairn::testing::BinDir;
using ::cairn::testing::CommandResult;
using ::cairn::testing::RunCommand;

class CudaLoadingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    ASSERT_FALSE(dir_.empty());
    trainer::testing::WriteText(
        dir_ + "/train.csv",
        trainer::testing::BlobsCsv(40, 3, /*seed=*/7, /*header=*/true));
  }

  // A one-epoch run of cairn-train with `backend`, traced by the loader.
  CommandResult Train(const std::string& backend,
                      std::vector<std::string> env = {}) {
    env.push_back("LD_DEBUG=files");
    return RunCommand({BinDir() + "/cairn-train", "--backend=" + backend,
                       "--train=" + dir_ + "/train.csv", "--epochs=1",
                       "--hidden_units=4", "--job-dir=" + dir_ + "/job"},
                      env);
  }

  // Whether the loader's trace opens a file whose name contains `lib`
  // (its lines read "file=NAME [0];  needed by ..." or "dynamically loaded").
  static bool Loaded(const CommandResult& r, const std::string& lib) {
    for (size_t at = r.err.find("file="); at != std::string::npos;
         at = r.err.find("file=", at + 1)) {
      const size_t end = r.err.find(' ', at);
      if (r.err.substr(at, end - at).find(lib) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  const ::cairn::testing::TempDir tmp_;
  std::string dir_;
};

TEST_F(CudaLoadingTest, CpuBackendMapsNoCudaLibrary) {
  const CommandResult r = Train("cpu");
  ASSERT_EQ(r.exit_code, 0)
      << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
  // The trace is there (it names libc), so the absences below mean something.
  ASSERT_TRUE(Loaded(r, "libc.so")) << "LD_DEBUG=files produced no trace";
  EXPECT_FALSE(Loaded(r, "libcudart"));
  EXPECT_FALSE(Loaded(r, "libcublas"));
  EXPECT_FALSE(Loaded(r, "libcairn_train_cuda"));
}

TEST_F(CudaLoadingTest, AutoBackendWithoutNvidiaDevicesMapsNoCuda) {
  if (NvidiaDeviceNodesPresent()) {
    GTEST_SKIP() << "NVIDIA device nodes present: --backend=auto loads CUDA "
                    "here by design";
  }
  const CommandResult r = Train("auto");
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  ASSERT_TRUE(Loaded(r, "libc.so")) << "LD_DEBUG=files produced no trace";
  EXPECT_FALSE(Loaded(r, "libcudart"));
  EXPECT_FALSE(Loaded(r, "libcairn_train_cuda"));
}

#ifndef CAIRN_TRAIN_WITHOUT_CUDA
TEST_F(CudaLoadingTest, CudaBackendLoadsTheModuleAndCudaRuntime) {
  const CommandResult r = Train("cuda");
  EXPECT_TRUE(Loaded(r, "libcairn_train_cuda.so"));
  EXPECT_TRUE(Loaded(r, "libcudart"));
  EXPECT_TRUE(Loaded(r, "libcublas"));
  if (r.exit_code != 0) {  // No GPU on this machine.
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("CUDA"), std::string::npos);
  }
}

TEST_F(CudaLoadingTest, MissingModuleIsAClearError) {
  const std::string missing = dir_ + "/no-such-module.so";
  const CommandResult r = RunCommand(
      {BinDir() + "/cairn-train", "--backend=cuda",
       "--train=" + dir_ + "/train.csv", "--epochs=1", "--job-dir=" + dir_},
      {"CAIRN_TRAIN_CUDA_MODULE=" + missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot load the CUDA backend module " + missing),
            std::string::npos)
      << r.err;
  EXPECT_LT(r.err.size(), 1024u) << r.err;
}
#else
TEST_F(CudaLoadingTest, CudaBackendIsAClearErrorWithoutCudaBuild) {
  const CommandResult r = Train("cuda");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("built without CUDA"), std::string::npos);
}
#endif

}  // namespace
}  // namespace cairn::trainer
