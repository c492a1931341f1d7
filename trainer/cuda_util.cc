// CUDA error conversion and device buffers (see cuda_util.h).
#include "trainer/cuda_util.h"

#include "absl/strings/str_cat.h"

namespace cairn::trainer::cuda {

absl::Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("CUDA error in ", what, ": ",
                                          cudaGetErrorName(err), " (",
                                          cudaGetErrorString(err), ")"));
}

absl::Status CublasStatus(cublasStatus_t err, const char* what) {
  if (err == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuBLAS error in ", what, ": status ",
                                          static_cast<int>(err)));
}

absl::Status CheckLaunch(const char* what) {
  return CudaStatus(cudaGetLastError(), what);
}

absl::Status DeviceBuffer::Allocate(size_t count) {
  Reset();
  if (count == 0) return absl::OkStatus();
  void* p = nullptr;
  absl::Status s =
      CudaStatus(cudaMalloc(&p, count * sizeof(float)), "cudaMalloc");
  if (!s.ok()) return s;
  ptr_ = static_cast<float*>(p);
  count_ = count;
  return CudaStatus(cudaMemset(ptr_, 0, count * sizeof(float)), "cudaMemset");
}

absl::Status DeviceBuffer::CopyFromHost(const float* src, size_t count) {
  if (count > count_) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy of ", count, " floats into a buffer of ", count_));
  }
  return CudaStatus(
      cudaMemcpy(ptr_, src, count * sizeof(float), cudaMemcpyHostToDevice),
      "cudaMemcpy H2D");
}

absl::Status DeviceBuffer::CopyToHost(float* dst, size_t count) const {
  if (count > count_) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy of ", count, " floats from a buffer of ", count_));
  }
  return CudaStatus(
      cudaMemcpy(dst, ptr_, count * sizeof(float), cudaMemcpyDeviceToHost),
      "cudaMemcpy D2H");
}

void DeviceBuffer::Reset() {
  if (ptr_ != nullptr) cudaFree(ptr_);
  ptr_ = nullptr;
  count_ = 0;
}

}  // namespace cairn::trainer::cuda
