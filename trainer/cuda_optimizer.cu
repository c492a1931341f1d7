// CUDA optimizer kernels (see cuda_optimizer.h).
#include "trainer/cuda_optimizer.h"
#include "trainer/cuda_util.h"

namespace cairn::trainer::cuda {
namespace {

// ---- Kernels ----

__global__ void AdamKernel(OptimizerStep s, size_t count, const float* g,
                           float* p, float* m, float* v) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k < count) AdamUpdate(s, g[k], p + k, m + k, v + k);
}

__global__ void SgdKernel(OptimizerStep s, size_t count, const float* g,
                          float* p, float* v) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k < count) SgdUpdate(s, g[k], p + k, v + k);
}

}  // namespace

// ---- Launchers ----

absl::Status LaunchAdamStep(cudaStream_t stream, const OptimizerStep& s,
                            size_t count, const float* g, float* p, float* m,
                            float* v) {
  if (count == 0) return absl::InvalidArgumentError("AdamStep: no parameters");
  AdamKernel<<<GridFor(count), kBlock, 0, stream>>>(s, count, g, p, m, v);
  return CheckLaunch("AdamKernel");
}

absl::Status LaunchSgdStep(cudaStream_t stream, const OptimizerStep& s,
                           size_t count, const float* g, float* p, float* v) {
  if (count == 0) return absl::InvalidArgumentError("SgdStep: no parameters");
  SgdKernel<<<GridFor(count), kBlock, 0, stream>>>(s, count, g, p, v);
  return CheckLaunch("SgdKernel");
}

}  // namespace cairn::trainer::cuda
