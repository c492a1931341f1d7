// CUDA: the three matrix products of a dense layer on row-major arrays, via
// cuBLAS SGEMM (column-major, so each call computes the transposed product).
// CPU reference: the Eigen products in cpu_backend.cc.
#ifndef CAIRN_TRAINER_CUDA_MATMUL_H_
#define CAIRN_TRAINER_CUDA_MATMUL_H_

#include <cublas_v2.h>

#include "absl/status/status.h"

namespace cairn::trainer::cuda {

// z[n, out] = a[n, in] * w[in, out]. The handle carries the stream.
absl::Status MatmulForward(cublasHandle_t h, int n, int in, int out,
                           const float* a, const float* w, float* z);
// dw[in, out] = a[n, in]^T * dz[n, out].
absl::Status MatmulGradWeight(cublasHandle_t h, int n, int in, int out,
                              const float* a, const float* dz, float* dw);
// da[n, in] = dz[n, out] * w[in, out]^T.
absl::Status MatmulGradInput(cublasHandle_t h, int n, int in, int out,
                             const float* dz, const float* w, float* da);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_MATMUL_H_
