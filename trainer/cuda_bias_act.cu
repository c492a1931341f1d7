// CUDA kernels for bias + activation (see cuda_bias_act.h).
#include "absl/strings/str_cat.h"
#include "trainer/cuda_bias_act.h"
#include "trainer/cuda_util.h"

namespace cairn::trainer::cuda {
namespace {

// ---- Kernels ----

__global__ void BiasActivationKernel(size_t count, int d, const float* bias,
                                     Activation act, float* z, float* a) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const float v = z[k] + bias[k % d];
  z[k] = v;
  if (a != nullptr) a[k] = Activate(act, v);
}

__global__ void ActivationBackwardKernel(size_t count, Activation act,
                                         const float* z, const float* da,
                                         const float* mask, float* dz) {
  const size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  float g = da[k];
  if (mask != nullptr) g *= mask[k];
  dz[k] = g * ActivateGrad(act, z[k]);
}

// One thread per column; rows summed in order so the result is reproducible.
__global__ void BiasGradKernel(int n, int d, const float* dz, float* db) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= d) return;
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += dz[static_cast<size_t>(i) * d + j];
  db[j] = s;
}

absl::Status CheckShape(int n, int d, const char* what) {
  if (n <= 0 || d <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": bad shape [", n, ", ", d, "]"));
  }
  return absl::OkStatus();
}

}  // namespace

// ---- Launchers ----

absl::Status LaunchBiasActivationForward(cudaStream_t stream, int n, int d,
                                         const float* bias, Activation act,
                                         float* z, float* a) {
  absl::Status s = CheckShape(n, d, "BiasActivationForward");
  if (!s.ok()) return s;
  const size_t count = static_cast<size_t>(n) * d;
  BiasActivationKernel<<<GridFor(count), kBlock, 0, stream>>>(count, d, bias,
                                                              act, z, a);
  return CheckLaunch("BiasActivationKernel");
}

absl::Status LaunchActivationBackward(cudaStream_t stream, int n, int d,
                                      Activation act, const float* z,
                                      const float* da, const float* mask,
                                      float* dz) {
  absl::Status s = CheckShape(n, d, "ActivationBackward");
  if (!s.ok()) return s;
  const size_t count = static_cast<size_t>(n) * d;
  ActivationBackwardKernel<<<GridFor(count), kBlock, 0, stream>>>(count, act, z,
                                                                  da, mask, dz);
  return CheckLaunch("ActivationBackwardKernel");
}

absl::Status LaunchBiasGrad(cudaStream_t stream, int n, int d, const float* dz,
                            float* db) {
  absl::Status s = CheckShape(n, d, "BiasGrad");
  if (!s.ok()) return s;
  BiasGradKernel<<<GridFor(d), kBlock, 0, stream>>>(n, d, dz, db);
  return CheckLaunch("BiasGradKernel");
}

}  // namespace cairn::trainer::cuda
