// GPU detection without linking CUDA: cairnd asks the CUDA driver
// (libcuda.so.1, opened with dlopen when asked) how many devices it sees.
// cairnd thus neither needs the CUDA runtime to start nor pays for loading
// it, and a machine without the driver simply has no GPUs.
#ifndef CAIRN_JOBS_GPU_DETECT_H_
#define CAIRN_JOBS_GPU_DETECT_H_

namespace cairn::jobs {

// The number of CUDA devices the driver library `driver_library` reports
// (cuInit(0), then cuDeviceGetCount; CUDA_VISIBLE_DEVICES applies, as the
// driver reads it). 0 when the library cannot be opened, lacks either
// function, or either call fails. The library stays loaded.
int DetectGpuCountWith(const char* driver_library);

// DetectGpuCountWith("libcuda.so.1"): the GPUs trial jobs may use.
int DetectGpuCount();

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_GPU_DETECT_H_
