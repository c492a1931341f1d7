// The boundary between cairn-train and its CUDA backend module.
//
// The CUDA backend (cuda_backend.cc and the kernels) is built as a shared
// module, libcairn_train_cuda.so, that links the CUDA runtime and cuBLAS.
// cairn-train itself links neither: cuda_loader.cc loads the module with
// dlopen only when the CUDA backend is asked for (--backend=cuda, or
// --backend=auto on a machine with NVIDIA device nodes), so a CPU run never
// maps the CUDA libraries and starts as fast as the other binaries.
//
// The module exports one C symbol, kCudaModuleEntry, returning the table
// below. Module and program come from the same build (same compiler, same
// Abseil), so the table may pass C++ types; kCudaModuleAbiVersion guards
// against a stale module left next to a newer binary.
#ifndef CAIRN_TRAINER_CUDA_MODULE_H_
#define CAIRN_TRAINER_CUDA_MODULE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "trainer/backend.h"

namespace cairn::trainer {

inline constexpr int kCudaModuleAbiVersion = 1;
inline constexpr char kCudaModuleEntry[] = "cairn_train_cuda_module_v1";
// File name of the module; installed in <prefix>/lib/cairn/ (and built into
// <build>/lib/cairn/), found relative to the running binary.
inline constexpr char kCudaModuleFileName[] = "libcairn_train_cuda.so";
// Environment variable naming the module file explicitly (tests, packagers).
inline constexpr char kCudaModuleEnv[] = "CAIRN_TRAIN_CUDA_MODULE";

struct CudaModuleApi {
  int abi_version;
  // Number of CUDA devices visible (0 when the driver or device is missing).
  int (*device_count)();
  // Creates the CUDA backend on device 0 (see cuda_backend.h).
  absl::StatusOr<std::unique_ptr<Backend>> (*create)(const ModelSpec& spec,
                                                     const HyperParams& hp,
                                                     int max_batch);
};

}  // namespace cairn::trainer

extern "C" {
// Defined in the module (cuda_module.cc); looked up with dlsym.
using CairnTrainCudaModuleFn = const cairn::trainer::CudaModuleApi* (*)();
}

#endif  // CAIRN_TRAINER_CUDA_MODULE_H_
