// GPU detection through the CUDA driver API, loaded at run time.
#include "jobs/gpu_detect.h"

#include <dlfcn.h>

namespace cairn::jobs {

namespace {

// The driver API's signatures (cuda.h); CUresult 0 is CUDA_SUCCESS.
using CuInitFn = int (*)(unsigned int flags);
using CuDeviceGetCountFn = int (*)(int* count);

}  // namespace

int DetectGpuCountWith(const char* driver_library) {
  void* driver = dlopen(driver_library, RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return 0;
  auto cu_init = reinterpret_cast<CuInitFn>(dlsym(driver, "cuInit"));
  auto cu_device_get_count =
      reinterpret_cast<CuDeviceGetCountFn>(dlsym(driver, "cuDeviceGetCount"));
  if (cu_init == nullptr || cu_device_get_count == nullptr) return 0;
  int count = 0;
  if (cu_init(0) != 0 || cu_device_get_count(&count) != 0) return 0;
  return count > 0 ? count : 0;
}

int DetectGpuCount() { return DetectGpuCountWith("libcuda.so.1"); }

}  // namespace cairn::jobs
