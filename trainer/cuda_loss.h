// CUDA: softmax cross-entropy (+ gradient), softmax alone and squared error
// (+ gradient). CPU reference: cpu::SoftmaxCrossEntropy, cpu::Softmax,
// cpu::MeanSquaredError.
#ifndef CAIRN_TRAINER_CUDA_LOSS_H_
#define CAIRN_TRAINER_CUDA_LOSS_H_

#include <cuda_runtime.h>

#include "absl/status/status.h"

namespace cairn::trainer::cuda {

// Per row i of the [n, c] logits: softmax in place, dlogits = (p - onehot) / n,
// row_loss[i] = -log p[label]. labels are class indices as floats in [0, c).
absl::Status LaunchSoftmaxCrossEntropy(cudaStream_t stream, int n, int c,
                                       const float* labels, float* logits,
                                       float* dlogits, float* row_loss);

// Softmax of each row of the [n, c] logits in place.
absl::Status LaunchSoftmax(cudaStream_t stream, int n, int c, float* logits);

// dout[i] = 2 (out[i] - y[i]) / n, row_loss[i] = (out[i] - y[i])^2.
absl::Status LaunchMeanSquaredError(cudaStream_t stream, int n,
                                    const float* out, const float* y,
                                    float* dout, float* row_loss);

}  // namespace cairn::trainer::cuda

#endif  // CAIRN_TRAINER_CUDA_LOSS_H_
