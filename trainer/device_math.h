// Element-wise math shared by the CPU (Eigen) and CUDA backends of cairn-train:
// the counter-based RNG, activations and the optimizer update. Keeping one
// definition here is what lets both backends draw identical dropout masks and
// apply identical updates. Header-only; every function is pure and thread-safe.
#ifndef CAIRN_TRAINER_DEVICE_MATH_H_
#define CAIRN_TRAINER_DEVICE_MATH_H_

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define CAIRN_HD __host__ __device__ __forceinline__
#else
#define CAIRN_HD inline
#endif

namespace cairn::trainer {

enum class Activation : int { kRelu = 0, kTanh = 1, kGelu = 2 };

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"):
// returns the first 32-bit word for counter (index, layer, step lo, step hi)
// under key (seed lo, seed hi). Stateless, so a dropout mask depends only on
// (seed, step, layer, index): identical on CPU and GPU and across restarts.
CAIRN_HD uint32_t Philox(uint64_t seed, uint64_t step, uint32_t layer,
                         uint32_t index) {
  uint32_t c0 = index, c1 = layer, c2 = static_cast<uint32_t>(step),
           c3 = static_cast<uint32_t>(step >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed),
           k1 = static_cast<uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32),
                   lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32),
                   lo1 = static_cast<uint32_t>(p1);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}

// Uniform float in [0, 1) with 24 random bits.
CAIRN_HD float UniformFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// Dropout multiplier of one activation: 0 with probability p, else 1/(1-p).
CAIRN_HD float DropoutScale(uint64_t seed, uint64_t step, uint32_t layer,
                            uint32_t index, float p) {
  const float u = UniformFromBits(Philox(seed, step, layer, index));
  return u < p ? 0.0f : 1.0f / (1.0f - p);
}

// Step used for parameter initialization draws (never a training step).
constexpr uint64_t kInitStep = ~uint64_t{0};

CAIRN_HD float Activate(Activation act, float z) {
  switch (act) {
    case Activation::kRelu:
      return z > 0.0f ? z : 0.0f;
    case Activation::kTanh:
      return tanhf(z);
    case Activation::kGelu: {
      // tanh approximation (Hendrycks & Gimpel).
      const float k = 0.7978845608028654f;  // sqrt(2/pi)
      const float t = tanhf(k * (z + 0.044715f * z * z * z));
      return 0.5f * z * (1.0f + t);
    }
  }
  return z;
}

// d Activate / dz at z.
CAIRN_HD float ActivateGrad(Activation act, float z) {
  switch (act) {
    case Activation::kRelu:
      return z > 0.0f ? 1.0f : 0.0f;
    case Activation::kTanh: {
      const float t = tanhf(z);
      return 1.0f - t * t;
    }
    case Activation::kGelu: {
      const float k = 0.7978845608028654f;
      const float u = k * (z + 0.044715f * z * z * z);
      const float t = tanhf(u);
      const float du = k * (1.0f + 3.0f * 0.044715f * z * z);
      return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * du;
    }
  }
  return 1.0f;
}

// Scalars of one optimizer step, computed once on the host in double.
struct OptimizerStep {
  float lr = 0.0f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;  // SGD only.
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float inv_bias1 = 1.0f;  // 1 / (1 - beta1^t)
  float inv_bias2 = 1.0f;  // 1 / (1 - beta2^t)
};

// AdamW (decoupled weight decay) update of one parameter.
CAIRN_HD void AdamUpdate(const OptimizerStep& s, float g, float* p, float* m,
                         float* v) {
  const float mm = s.beta1 * *m + (1.0f - s.beta1) * g;
  const float vv = s.beta2 * *v + (1.0f - s.beta2) * g * g;
  *m = mm;
  *v = vv;
  const float denom = sqrtf(vv * s.inv_bias2) + s.eps;
  *p = *p - s.lr * (s.weight_decay * *p + (mm * s.inv_bias1) / denom);
}

// SGD with (heavy-ball) momentum and L2 weight decay; v is the velocity.
CAIRN_HD void SgdUpdate(const OptimizerStep& s, float g, float* p, float* v) {
  const float gg = g + s.weight_decay * *p;
  const float vv = s.momentum * *v + gg;
  *v = vv;
  *p = *p - s.lr * vv;
}

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_DEVICE_MATH_H_
