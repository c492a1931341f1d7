// The CUDA backend of cairn-train: cuBLAS SGEMM for the products and the
// kernels of cuda_bias_act.h, cuda_dropout.h, cuda_loss.h, cuda_optimizer.h.
// Masks come from the same counter-based RNG as the CPU backend.
#ifndef CAIRN_TRAINER_CUDA_BACKEND_H_
#define CAIRN_TRAINER_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "trainer/backend.h"

namespace cairn::trainer {

// Creates the CUDA backend on device 0. FailedPrecondition when no device is
// present; Internal for other CUDA/cuBLAS failures.
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(
    const ModelSpec& spec, const HyperParams& hp, int max_batch);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_CUDA_BACKEND_H_
