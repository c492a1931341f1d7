// Finds and loads cairn-train's CUDA module (see cuda_module.h) on first use.
#ifndef CAIRN_TRAINER_CUDA_LOADER_H_
#define CAIRN_TRAINER_CUDA_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/backend.h"
#include "trainer/cuda_module.h"

namespace cairn::trainer {

// The module's path: $CAIRN_TRAIN_CUDA_MODULE when set and non-empty, else
// <directory of the running binary>/../lib/cairn/libcairn_train_cuda.so.
std::string CudaModulePath();

// Loads the module once per process (thread-safe) and returns its table.
// FailedPrecondition naming the path and the loader's message when the file
// is missing, a library it needs (libcudart, libcublas) cannot be found, or
// its ABI version differs. Later calls return the first call's result.
absl::StatusOr<const CudaModuleApi*> LoadCudaModule();

// Whether the machine shows NVIDIA device nodes (/dev/nvidiactl, or /dev/dxg
// under WSL). Cheap: loads nothing. False means no CUDA device can exist.
bool NvidiaDeviceNodesPresent();

// Creates the CUDA backend through the module. FailedPrecondition when the
// module cannot be loaded (the message says why) or no device is present.
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(
    const ModelSpec& spec, const HyperParams& hp, int max_batch);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_CUDA_LOADER_H_
