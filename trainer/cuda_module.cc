// Entry point of libcairn_train_cuda.so (see cuda_module.h): the only symbol
// the module exports.
#include "trainer/cuda_module.h"

#include "trainer/cuda_backend.h"

extern "C" __attribute__((visibility("default")))
const cairn::trainer::CudaModuleApi*
cairn_train_cuda_module_v1() {
  static const cairn::trainer::CudaModuleApi kApi = {
      cairn::trainer::kCudaModuleAbiVersion,
      &cairn::trainer::cuda::DeviceCount,
      &cairn::trainer::cuda::CreateBackend,
  };
  return &kApi;
}
