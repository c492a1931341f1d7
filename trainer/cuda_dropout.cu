// CUDA dropout kernel (see cuda_dropout.h).
#include "absl/strings/str_cat.h"
#include "trainer/cuda_dropout.h"
#include "trainer/cuda_util.h"
#include "trainer/device_math.h"

namespace cairn::trainer::cuda {
namespace {

// ---- Kernels ----

__global__ void DropoutKernel(size_t count, uint64_t seed, uint64_t step,
                              uint32_t layer, float p, float* a, float* mask) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const float s = DropoutScale(seed, step, layer, static_cast<uint32_t>(k), p);
  mask[k] = s;
  a[k] *= s;
}

}  // namespace

// ---- Launchers ----

absl::Status LaunchDropoutForward(cudaStream_t stream, int n, int d,
                                  uint64_t seed, uint64_t step, uint32_t layer,
                                  float p, float* a, float* mask) {
  if (n <= 0 || d <= 0 || !(p >= 0.0f && p < 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DropoutForward: bad shape [", n, ", ", d, "] or rate ", p));
  }
  const size_t count = static_cast<size_t>(n) * d;
  DropoutKernel<<<GridFor(count), kBlock, 0, stream>>>(count, seed, step, layer,
                                                       p, a, mask);
  return CheckLaunch("DropoutKernel");
}

}  // namespace cairn::trainer::cuda
