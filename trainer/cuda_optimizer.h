// CUDA: the optimizer updates (AdamW, SGD with momentum) over the flat
// parameter array. CPU reference: cpu::AdamStep, cpu::SgdStep.
#ifndef CAIRN_TRAINER_CUDA_OPTIMIZER_H_
#define CAIRN_TRAINER_CUDA_OPTIMIZER_H_

#include <cuda_runtime.h>

#include <cstddef>

#include "absl/status/status.h"
#include "trainer/device_math.h"

namespace cairn::trainer::cuda {

absl::Status LaunchAdamStep(cudaStream_t stream, const OptimizerStep& s,
                            size_t count, const float* g, float* p, float* m,
                            float* v);
absl::Status LaunchSgdStep(cudaStream_t stream, const OptimizerStep& s,
                           size_t count, const float* g, float* p, float* v);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_OPTIMIZER_H_
