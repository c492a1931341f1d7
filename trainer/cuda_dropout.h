// CUDA: dropout with the counter-based RNG of device_math.h, so masks equal
// the CPU's. CPU reference: cpu::DropoutForward.
#ifndef CAIRN_TRAINER_CUDA_DROPOUT_H_
#define CAIRN_TRAINER_CUDA_DROPOUT_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "absl/status/status.h"

namespace cairn::trainer::cuda {

// mask[k] = DropoutScale(seed, step, layer, k, p); a[k] *= mask[k] on [n, d].
absl::Status LaunchDropoutForward(cudaStream_t stream, int n, int d,
                                  uint64_t seed, uint64_t step, uint32_t layer,
                                  float p, float* a, float* mask);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_DROPOUT_H_
