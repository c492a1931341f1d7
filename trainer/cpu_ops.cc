// CPU implementations of the per-step operations (see cpu_ops.h).
#include "trainer/cpu_ops.h"

#include <algorithm>
#include <cmath>

namespace cairn::trainer::cpu {

void BiasActivationForward(int n, int d, const float* bias, Activation act,
                           float* z, float* a) {
  for (int i = 0; i < n; ++i) {
    float* zr = z + static_cast<size_t>(i) * d;
    float* ar = a + static_cast<size_t>(i) * d;
    switch (act) {
      case Activation::kRelu:
#pragma omp simd
        for (int j = 0; j < d; ++j) {
          const float v = zr[j] + bias[j];
          zr[j] = v;
          ar[j] = v > 0.0f ? v : 0.0f;
        }
        break;
      default:
        for (int j = 0; j < d; ++j) {
          const float v = zr[j] + bias[j];
          zr[j] = v;
          ar[j] = Activate(act, v);
        }
    }
  }
}

void ActivationBackward(int n, int d, Activation act, const float* z,
                        const float* da, float* dz) {
  const size_t count = static_cast<size_t>(n) * d;
  if (act == Activation::kRelu) {
#pragma omp simd
    for (size_t k = 0; k < count; ++k) dz[k] = z[k] > 0.0f ? da[k] : 0.0f;
    return;
  }
  for (size_t k = 0; k < count; ++k) dz[k] = da[k] * ActivateGrad(act, z[k]);
}

void DropoutForward(int n, int d, uint64_t seed, uint64_t step, uint32_t layer,
                    float p, float* a, float* mask, size_t first_index) {
  const size_t count = static_cast<size_t>(n) * d;
  for (size_t k = 0; k < count; ++k) {
    const float s = DropoutScale(seed, step, layer,
                                 static_cast<uint32_t>(first_index + k), p);
    mask[k] = s;
    a[k] *= s;
  }
}

void Softmax(int n, int c, float* logits) {
  for (int i = 0; i < n; ++i) {
    float* r = logits + static_cast<size_t>(i) * c;
    float mx = r[0];
    for (int j = 1; j < c; ++j) mx = std::max(mx, r[j]);
    float sum = 0.0f;
    for (int j = 0; j < c; ++j) {
      r[j] = std::exp(r[j] - mx);
      sum += r[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < c; ++j) r[j] *= inv;
  }
}

double SoftmaxCrossEntropy(int n, int c, const float* labels, float* logits,
                           float* dlogits, int norm) {
  Softmax(n, c, logits);
  double loss = 0.0;
  const float inv_n = 1.0f / static_cast<float>(norm > 0 ? norm : n);
  for (int i = 0; i < n; ++i) {
    const float* p = logits + static_cast<size_t>(i) * c;
    float* g = dlogits + static_cast<size_t>(i) * c;
    const int y = static_cast<int>(labels[i]);
    for (int j = 0; j < c; ++j) g[j] = p[j] * inv_n;
    g[y] -= inv_n;
    loss -= std::log(std::max(p[y], 1e-30f));
  }
  return loss;
}

double MeanSquaredError(int n, const float* out, const float* y, float* dout,
                        int norm) {
  double loss = 0.0;
  const float scale = 2.0f / static_cast<float>(norm > 0 ? norm : n);
  for (int i = 0; i < n; ++i) {
    const float e = out[i] - y[i];
    dout[i] = scale * e;
    loss += static_cast<double>(e) * e;
  }
  return loss;
}

void BiasGrad(int n, int d, const float* dz, float* db) {
  std::fill(db, db + d, 0.0f);
  for (int i = 0; i < n; ++i) {
    const float* r = dz + static_cast<size_t>(i) * d;
#pragma omp simd
    for (int j = 0; j < d; ++j) db[j] += r[j];
  }
}

void AdamStep(const OptimizerStep& s, size_t count, const float* g, float* p,
              float* m, float* v) {
#pragma omp simd
  for (size_t k = 0; k < count; ++k) AdamUpdate(s, g[k], p + k, m + k, v + k);
}

void SgdStep(const OptimizerStep& s, size_t count, const float* g, float* p,
             float* v) {
#pragma omp simd
  for (size_t k = 0; k < count; ++k) SgdUpdate(s, g[k], p + k, v + k);
}

}  // namespace cairn::trainer::cpu
