// Loads libcairn_train_cuda.so with dlopen (see cuda_loader.h).
#include "trainer/cuda_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace cairn::trainer {
namespace {

// Directory of the running binary, from /proc/self/exe ("" when unknown).
std::string ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return exe.parent_path().string();
}

absl::StatusOr<const CudaModuleApi*> LoadFrom(const std::string& path) {
#ifdef CAIRN_TRAIN_WITHOUT_CUDA
  (void)path;
  return absl::FailedPreconditionError(
      "--backend=cuda: this cairn-train was built without CUDA "
      "(CAIRN_WITH_CUDA=OFF)");
#else
  // RTLD_LOCAL: the module's symbols (and CUDA's) stay out of the program's
  // namespace. The handle is kept for the life of the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "--backend=cuda: cannot load the CUDA backend module ", path, ": ",
        err != nullptr ? err : "unknown error", " (set ", kCudaModuleEnv,
        " to its path, or use --backend=cpu)"));
  }
  auto entry =
      reinterpret_cast<CairnTrainCudaModuleFn>(dlsym(handle, kCudaModuleEntry));
  if (entry == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backend=cuda: ", path, " has no symbol ",
                     kCudaModuleEntry, ": not a cairn-train CUDA module"));
  }
  const CudaModuleApi* api = entry();
  if (api == nullptr || api->abi_version != kCudaModuleAbiVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--backend=cuda: ", path, " is from another cairn-train build (ABI ",
        api == nullptr ? -1 : api->abi_version, ", expected ",
        kCudaModuleAbiVersion, ")"));
  }
  return api;
#endif
}

}  // namespace

std::string CudaModulePath() {
  const char* env = std::getenv(kCudaModuleEnv);
  if (env != nullptr && env[0] != '\0') return env;
  return absl::StrCat(ExecutableDir(), "/../lib/cairn/", kCudaModuleFileName);
}

absl::StatusOr<const CudaModuleApi*> LoadCudaModule() {
  static const absl::StatusOr<const CudaModuleApi*>* const kLoaded =
      new absl::StatusOr<const CudaModuleApi*>(LoadFrom(CudaModulePath()));
  return *kLoaded;
}

bool NvidiaDeviceNodesPresent() {
  return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

int CudaDeviceCount() {
  if (!NvidiaDeviceNodesPresent()) return 0;
  absl::StatusOr<const CudaModuleApi*> api = LoadCudaModule();
  if (!api.ok()) return 0;
  return (*api)->device_count();
}

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(
    const ModelSpec& spec, const HyperParams& hp, int max_batch) {
  absl::StatusOr<const CudaModuleApi*> api = LoadCudaModule();
  if (!api.ok()) return api.status();
  return (*api)->create(spec, hp, max_batch);
}

}  // namespace cairn::trainer
