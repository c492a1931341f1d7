// Row-major dense-layer products through cuBLAS (see cuda_matmul.h).
#include "trainer/cuda_matmul.h"

#include "absl/strings/str_cat.h"
#include "trainer/cuda_util.h"

namespace cairn::trainer::cuda {
namespace {

absl::Status CheckDims(int n, int in, int out, const char* what) {
  if (n <= 0 || in <= 0 || out <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": bad dims n=", n, " in=", in, " out=", out));
  }
  return absl::OkStatus();
}

}  // namespace

// A row-major [r, c] array is the column-major [c, r] matrix, its transpose.
absl::Status MatmulForward(cublasHandle_t h, int n, int in, int out,
                           const float* a, const float* w, float* z) {
  absl::Status s = CheckDims(n, in, out, "MatmulForward");
  if (!s.ok()) return s;
  const float one = 1.0f, zero = 0.0f;
  // z^T[out, n] = w^T[out, in] * a^T[in, n].
  return CublasStatus(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, out, n, in, &one,
                                  w, out, a, in, &zero, z, out),
                      "MatmulForward");
}

absl::Status MatmulGradWeight(cublasHandle_t h, int n, int in, int out,
                              const float* a, const float* dz, float* dw) {
  absl::Status s = CheckDims(n, in, out, "MatmulGradWeight");
  if (!s.ok()) return s;
  const float one = 1.0f, zero = 0.0f;
  // dw^T[out, in] = dz^T[out, n] * a[n, in].
  return CublasStatus(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, out, in, n, &one,
                                  dz, out, a, in, &zero, dw, out),
                      "MatmulGradWeight");
}

absl::Status MatmulGradInput(cublasHandle_t h, int n, int in, int out,
                             const float* dz, const float* w, float* da) {
  absl::Status s = CheckDims(n, in, out, "MatmulGradInput");
  if (!s.ok()) return s;
  const float one = 1.0f, zero = 0.0f;
  // da^T[in, n] = w[in, out] * dz^T[out, n].
  return CublasStatus(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, in, n, out, &one,
                                  w, out, dz, out, &zero, da, in),
                      "MatmulGradInput");
}

}  // namespace cairn::trainer::cuda
