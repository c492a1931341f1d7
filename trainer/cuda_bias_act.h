// CUDA: bias + activation of a dense layer, its backward pass (with the
// dropout multipliers folded in) and the bias gradient. CPU reference:
// cpu::BiasActivationForward, cpu::ActivationBackward, cpu::BiasGrad.
#ifndef CAIRN_TRAINER_CUDA_BIAS_ACT_H_
#define CAIRN_TRAINER_CUDA_BIAS_ACT_H_

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "trainer/device_math.h"

namespace cairn::trainer::cuda {

// z[i, j] += bias[j]; a[i, j] = act(z[i, j]) on [n, d] device arrays. With
// a == nullptr only the bias is added (the output layer).
absl::Status LaunchBiasActivationForward(cudaStream_t stream, int n, int d,
                                         const float* bias, Activation act,
                                         float* z, float* a);

// dz = da * act'(z) (* mask when mask != nullptr), on [n, d] device arrays.
absl::Status LaunchActivationBackward(cudaStream_t stream, int n, int d,
                                      Activation act, const float* z,
                                      const float* da, const float* mask,
                                      float* dz);

// db[j] = sum_i dz[i, j].
absl::Status LaunchBiasGrad(cudaStream_t stream, int n, int d, const float* dz,
                            float* db);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_BIAS_ACT_H_
