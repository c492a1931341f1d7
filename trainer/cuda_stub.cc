// Stand-in for the CUDA backend in builds configured with
// -DCAIRN_WITH_CUDA=OFF: no device is ever found.
#include "absl/status/status.h"
#include "trainer/cuda_backend.h"

namespace cairn::trainer {

int CudaDeviceCount() { return 0; }

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const ModelSpec&,
                                                           const HyperParams&,
                                                           int) {
  return absl::FailedPreconditionError(
      "--backend=cuda: this cairn-train was built without CUDA "
      "(CAIRN_WITH_CUDA=OFF)");
}

}  // namespace cairn::trainer
