// CUDA loss kernels (see cuda_loss.h). One thread per row: the class counts
// of a tabular MLP are small, and a serial row keeps results reproducible.
#include "absl/strings/str_cat.h"
#include "trainer/cuda_loss.h"
#include "trainer/cuda_util.h"

namespace cairn::trainer::cuda {
namespace {

// ---- Kernels ----

__device__ void SoftmaxRow(int c, float* r) {
  float mx = r[0];
  for (int j = 1; j < c; ++j) mx = fmaxf(mx, r[j]);
  float sum = 0.0f;
  for (int j = 0; j < c; ++j) {
    r[j] = expf(r[j] - mx);
    sum += r[j];
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < c; ++j) r[j] *= inv;
}

__global__ void SoftmaxKernel(int n, int c, float* logits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  SoftmaxRow(c, logits + static_cast<size_t>(i) * c);
}

__global__ void SoftmaxCrossEntropyKernel(int n, int c, const float* labels,
                                          float* logits, float* dlogits,
                                          float* row_loss) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* p = logits + static_cast<size_t>(i) * c;
  float* g = dlogits + static_cast<size_t>(i) * c;
  SoftmaxRow(c, p);
  const float inv_n = 1.0f / static_cast<float>(n);
  const int y = static_cast<int>(labels[i]);
  for (int j = 0; j < c; ++j) g[j] = p[j] * inv_n;
  g[y] -= inv_n;
  row_loss[i] = -logf(fmaxf(p[y], 1e-30f));
}

__global__ void MeanSquaredErrorKernel(int n, const float* out, const float* y,
                                       float* dout, float* row_loss) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float e = out[i] - y[i];
  dout[i] = (2.0f / static_cast<float>(n)) * e;
  row_loss[i] = e * e;
}

absl::Status CheckShape(int n, int c, const char* what) {
  if (n <= 0 || c <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": bad shape [", n, ", ", c, "]"));
  }
  return absl::OkStatus();
}

}  // namespace

// ---- Launchers ----

absl::Status LaunchSoftmaxCrossEntropy(cudaStream_t stream, int n, int c,
                                       const float* labels, float* logits,
                                       float* dlogits, float* row_loss) {
  absl::Status s = CheckShape(n, c, "SoftmaxCrossEntropy");
  if (!s.ok()) return s;
  SoftmaxCrossEntropyKernel<<<GridFor(n), kBlock, 0, stream>>>(
      n, c, labels, logits, dlogits, row_loss);
  return CheckLaunch("SoftmaxCrossEntropyKernel");
}

absl::Status LaunchSoftmax(cudaStream_t stream, int n, int c, float* logits) {
  absl::Status s = CheckShape(n, c, "Softmax");
  if (!s.ok()) return s;
  SoftmaxKernel<<<GridFor(n), kBlock, 0, stream>>>(n, c, logits);
  return CheckLaunch("SoftmaxKernel");
}

absl::Status LaunchMeanSquaredError(cudaStream_t stream, int n,
                                    const float* out, const float* y,
                                    float* dout, float* row_loss) {
  absl::Status s = CheckShape(n, 1, "MeanSquaredError");
  if (!s.ok()) return s;
  MeanSquaredErrorKernel<<<GridFor(n), kBlock, 0, stream>>>(n, out, y, dout,
                                                            row_loss);
  return CheckLaunch("MeanSquaredErrorKernel");
}

}  // namespace cairn::trainer::cuda
