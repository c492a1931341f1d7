// CUDA plumbing for cairn-train: error codes to absl::Status and an RAII
// device buffer. Errors never terminate the process.
#ifndef CAIRN_TRAINER_CUDA_UTIL_H_
#define CAIRN_TRAINER_CUDA_UTIL_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "absl/status/status.h"

namespace cairn::trainer::cuda {

// OK for cudaSuccess, else Internal naming `what` and the CUDA error string.
absl::Status CudaStatus(cudaError_t err, const char* what);
absl::Status CublasStatus(cublasStatus_t err, const char* what);

// Checks the last kernel launch (configuration errors) of `what`.
absl::Status CheckLaunch(const char* what);

// Number of threads per block used by the element-wise kernels.
constexpr int kBlock = 256;
inline int GridFor(size_t count) {
  return static_cast<int>((count + kBlock - 1) / kBlock);
}

// Owns `count` floats of device memory. Movable, not copyable.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)),
        count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates (replacing any previous allocation) and zero-fills.
  absl::Status Allocate(size_t count);
  absl::Status CopyFromHost(const float* src, size_t count);
  absl::Status CopyToHost(float* dst, size_t count) const;
  float* get() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  void Reset();
  float* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_UTIL_H_
