// The element-wise and reduction operations of one MLP training step on the
// CPU, on raw row-major float32 arrays. They are the CPU backend's kernels and
// the reference that every CUDA kernel is tested against. All functions are
// thread-compatible (no shared state) and never allocate.
#ifndef CAIRN_TRAINER_CPU_OPS_H_
#define CAIRN_TRAINER_CPU_OPS_H_

#include <cstddef>
#include <cstdint>

#include "trainer/device_math.h"

namespace cairn::trainer::cpu {

// z[i, j] += bias[j]; a[i, j] = act(z[i, j]) for the [n, d] arrays z and a.
void BiasActivationForward(int n, int d, const float* bias, Activation act,
                           float* z, float* a);

// dz[i, j] = da[i, j] * act'(z[i, j]).
void ActivationBackward(int n, int d, Activation act, const float* z,
                        const float* da, float* dz);

// Draws the dropout multipliers of layer `layer` at `step` into mask and
// multiplies a by them: a[k] *= mask[k], the RNG counter being
// first_index + k, k = i * d + j. A shard of a batch starting at row r passes
// first_index = r * d, so masks do not depend on how a batch is split.
void DropoutForward(int n, int d, uint64_t seed, uint64_t step, uint32_t layer,
                    float p, float* a, float* mask, size_t first_index = 0);

// Overwrites the [n, c] logits with softmax probabilities, writes
// dlogits = (probs - onehot(labels)) / norm (norm = n when 0; a shard of a
// batch passes the batch size) and returns the summed (not mean)
// cross-entropy. labels hold class indices as floats, each in [0, c).
double SoftmaxCrossEntropy(int n, int c, const float* labels, float* logits,
                           float* dlogits, int norm = 0);

// Softmax of each row of the [n, c] logits in place.
void Softmax(int n, int c, float* logits);

// Squared error of the [n, 1] outputs: writes dout = 2 (out - y) / norm
// (norm = n when 0) and returns the summed squared error.
double MeanSquaredError(int n, const float* out, const float* y, float* dout,
                        int norm = 0);

// db[j] = sum_i dz[i, j].
void BiasGrad(int n, int d, const float* dz, float* db);

// Applies the update to count parameters.
void AdamStep(const OptimizerStep& s, size_t count, const float* g, float* p,
              float* m, float* v);
void SgdStep(const OptimizerStep& s, size_t count, const float* g, float* p,
             float* v);

}  // namespace cairn::trainer::cpu

#endif  // CAIRN_TRAINER_CPU_OPS_H_
