// The CUDA backend of cairn-train: cuBLAS SGEMM for the products and the
// kernels of cuda_bias_act.h, cuda_dropout.h, cuda_loss.h, cuda_optimizer.h.
// Masks come from the same counter-based RNG as the CPU backend.
//
// Compiled into the CUDA module only (see cuda_module.h); the program reaches
// these through cuda_loader.h.
#ifndef CAIRN_TRAINER_CUDA_BACKEND_H_
#define CAIRN_TRAINER_CUDA_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "trainer/backend.h"

namespace cairn::trainer::cuda {

// Number of CUDA devices visible (0 when the driver or device is missing).
int DeviceCount();

// Creates the CUDA backend on device 0. FailedPrecondition when no device is
// present; Internal for other CUDA/cuBLAS failures.
absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const ModelSpec& spec,
                                                       const HyperParams& hp,
                                                       int max_batch);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_BACKEND_H_
