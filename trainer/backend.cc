// Backend factory: picks the CPU or CUDA implementation.
#include "trainer/backend.h"

#include "absl/strings/str_cat.h"
#include "trainer/cpu_backend.h"
#include "trainer/cuda_loader.h"

namespace cairn::trainer {

absl::StatusOr<BackendKind> ParseBackendKind(const std::string& s) {
  if (s == "auto") return BackendKind::kAuto;
  if (s == "cpu") return BackendKind::kCpu;
  if (s == "cuda") return BackendKind::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("--backend: expected auto, cpu or cuda, got '", s, "'"));
}

absl::StatusOr<std::unique_ptr<Backend>> Backend::Create(BackendKind kind,
                                                         const ModelSpec& spec,
                                                         const HyperParams& hp,
                                                         int threads,
                                                         int max_batch) {
  absl::Status valid = spec.Validate();
  if (!valid.ok()) return valid;
  if (max_batch <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max batch must be positive, got ", max_batch));
  }
  if (kind == BackendKind::kCuda ||
      (kind == BackendKind::kAuto && CudaDeviceCount() > 0)) {
    return CreateCudaBackend(spec, hp, max_batch);
  }
  return std::unique_ptr<Backend>(
      std::make_unique<CpuBackend>(spec, hp, threads, max_batch));
}

}  // namespace cairn::trainer
