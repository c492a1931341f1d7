// GPU detection through the CUDA driver loaded at run time, against stand-in
// driver libraries (tests/jobs/fake_cuda_driver.cc), and the fact that
// cairnd no longer links the CUDA runtime.
#include "jobs/gpu_detect.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace cairn::jobs {
namespace {

TEST(GpuDetectTest, CountsTheDevicesTheDriverReports) {
  EXPECT_EQ(DetectGpuCountWith(FAKE_CUDA_THREE_GPUS), 3);
}

TEST(GpuDetectTest, DriverThatFailsToInitializeMeansNoGpus) {
  EXPECT_EQ(DetectGpuCountWith(FAKE_CUDA_NO_DEVICE), 0);
}

TEST(GpuDetectTest, MissingDriverOrFunctionsMeansNoGpus) {
  EXPECT_EQ(DetectGpuCountWith("/nonexistent/libcuda.so.1"), 0);
  // A real library without the driver's functions.
  EXPECT_EQ(DetectGpuCountWith("libm.so.6"), 0);
}

TEST(GpuDetectTest, CairndDoesNotLinkTheCudaRuntime) {
  const std::string command =
      std::string("readelf -d ") + CAIRND_PATH + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  EXPECT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  EXPECT_EQ(out.find("libcudart"), std::string::npos) << out;
  EXPECT_EQ(out.find("libcublas"), std::string::npos) << out;
}

}  // namespace
}  // namespace cairn::jobs
