// CPU kernels of cairn-train against naive double-precision references, and
// the CPU backend's gradients against finite differences.
#include "trainer/cpu_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "trainer/cpu_backend.h"
#include "trainer/device_math.h"
#include "trainer/model.h"

namespace cairn::trainer {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double RefActivate(Activation a, double z) {
  switch (a) {
    case Activation::kRelu:
      return z > 0 ? z : 0;
    case Activation::kTanh:
      return std::tanh(z);
    case Activation::kGelu:
      return 0.5 * z *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
  }
  return z;
}

class ActivationTest : public ::testing::TestWithParam<Activation> {};

TEST_P(ActivationTest, BiasActivationForwardMatchesReference) {
  const int n = 5, d = 37;
  std::vector<float> z = RandomVector(n * d, 1, 3.0f),
                     bias = RandomVector(d, 2);
  std::vector<float> z0 = z, a(n * d);
  cpu::BiasActivationForward(n, d, bias.data(), GetParam(), z.data(), a.data());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) {
      const double zz = static_cast<double>(z0[i * d + j]) + bias[j];
      EXPECT_NEAR(z[i * d + j], zz, 1e-6);
      EXPECT_NEAR(a[i * d + j], RefActivate(GetParam(), zz), 1e-5);
    }
  }
}

TEST_P(ActivationTest, BackwardMatchesFiniteDifferenceOfActivation) {
  const int n = 4, d = 29;
  std::vector<float> z = RandomVector(n * d, 3, 3.0f),
                     da = RandomVector(n * d, 4);
  std::vector<float> dz(n * d);
  cpu::ActivationBackward(n, d, GetParam(), z.data(), da.data(), dz.data());
  for (int k = 0; k < n * d; ++k) {
    if (GetParam() == Activation::kRelu && std::fabs(z[k]) < 1e-3) continue;
    const double h = 1e-5;
    const double deriv = (RefActivate(GetParam(), z[k] + h) -
                          RefActivate(GetParam(), z[k] - h)) /
                         (2 * h);
    EXPECT_NEAR(dz[k], da[k] * deriv, 1e-4) << "k=" << k;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ActivationTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh,
                                           Activation::kGelu));

TEST(CpuOpsTest, DropoutIsCounterBasedAndHasTheRightRate) {
  const int n = 64, d = 256;
  const float p = 0.3f;
  std::vector<float> a(n * d, 1.0f), mask(n * d);
  cpu::DropoutForward(n, d, 42, 7, 1, p, a.data(), mask.data());
  int dropped = 0;
  for (int k = 0; k < n * d; ++k) {
    ASSERT_TRUE(mask[k] == 0.0f ||
                std::fabs(mask[k] - 1.0f / (1.0f - p)) < 1e-6);
    EXPECT_EQ(a[k], mask[k]);
    EXPECT_EQ(mask[k], DropoutScale(42, 7, 1, k, p));
    dropped += mask[k] == 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / (n * d), p, 0.02);
  // A different step or layer gives a different mask.
  std::vector<float> a2(n * d, 1.0f), mask2(n * d);
  cpu::DropoutForward(n, d, 42, 8, 1, p, a2.data(), mask2.data());
  EXPECT_NE(mask, mask2);
}

TEST(CpuOpsTest, PhiloxIsUniform) {
  // Mean and variance of 100k draws of U[0, 1).
  double s = 0, s2 = 0;
  const int count = 100000;
  for (int i = 0; i < count; ++i) {
    const double u = UniformFromBits(Philox(123, 9, 0, i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    s += u;
    s2 += u * u;
  }
  EXPECT_NEAR(s / count, 0.5, 0.005);
  EXPECT_NEAR(s2 / count - 0.25, 1.0 / 12, 0.003);
}

TEST(CpuOpsTest, SoftmaxCrossEntropyMatchesReference) {
  const int n = 7, c = 5;
  std::vector<float> logits = RandomVector(n * c, 5, 4.0f), labels(n), g(n * c);
  for (int i = 0; i < n; ++i) labels[i] = static_cast<float>(i % c);
  const std::vector<float> l0 = logits;
  const double loss =
      cpu::SoftmaxCrossEntropy(n, c, labels.data(), logits.data(), g.data());
  double ref_loss = 0;
  for (int i = 0; i < n; ++i) {
    double mx = -1e30, sum = 0;
    for (int j = 0; j < c; ++j)
      mx = std::max(mx, static_cast<double>(l0[i * c + j]));
    for (int j = 0; j < c; ++j) sum += std::exp(l0[i * c + j] - mx);
    for (int j = 0; j < c; ++j) {
      const double p = std::exp(l0[i * c + j] - mx) / sum;
      EXPECT_NEAR(logits[i * c + j], p, 1e-6);
      EXPECT_NEAR(g[i * c + j], (p - (j == labels[i] ? 1.0 : 0.0)) / n, 1e-6);
    }
    ref_loss -=
        std::log(std::exp(l0[i * c + static_cast<int>(labels[i])] - mx) / sum);
  }
  EXPECT_NEAR(loss, ref_loss, 1e-4);
}

TEST(CpuOpsTest, MeanSquaredErrorAndBiasGrad) {
  const int n = 9;
  std::vector<float> out = RandomVector(n, 6), y = RandomVector(n, 7), d(n);
  const double loss = cpu::MeanSquaredError(n, out.data(), y.data(), d.data());
  double ref = 0;
  for (int i = 0; i < n; ++i) {
    ref += (out[i] - y[i]) * (out[i] - y[i]);
    EXPECT_NEAR(d[i], 2.0 * (out[i] - y[i]) / n, 1e-6);
  }
  EXPECT_NEAR(loss, ref, 1e-5);

  const int rows = 13, cols = 6;
  std::vector<float> dz = RandomVector(rows * cols, 8), db(cols);
  cpu::BiasGrad(rows, cols, dz.data(), db.data());
  for (int j = 0; j < cols; ++j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += dz[i * cols + j];
    EXPECT_NEAR(db[j], s, 1e-5);
  }
}

TEST(CpuOpsTest, AdamMatchesReference) {
  HyperParams hp;
  hp.learning_rate = 0.01f;
  hp.weight_decay = 0.1f;
  const size_t count = 50;
  std::vector<float> p = RandomVector(count, 9), m(count, 0), v(count, 0);
  std::vector<double> rp(p.begin(), p.end()), rm(count, 0), rv(count, 0);
  for (uint64_t step = 0; step < 3; ++step) {
    const std::vector<float> g = RandomVector(count, 10 + step);
    cpu::AdamStep(MakeOptimizerStep(hp, step), count, g.data(), p.data(),
                  m.data(), v.data());
    const double t = step + 1;
    for (size_t k = 0; k < count; ++k) {
      rm[k] = 0.9 * rm[k] + 0.1 * g[k];
      rv[k] = 0.999 * rv[k] + 0.001 * g[k] * g[k];
      const double mh = rm[k] / (1 - std::pow(0.9, t));
      const double vh = rv[k] / (1 - std::pow(0.999, t));
      rp[k] -= 0.01 * (0.1 * rp[k] + mh / (std::sqrt(vh) + 1e-8));
    }
  }
  for (size_t k = 0; k < count; ++k) EXPECT_NEAR(p[k], rp[k], 1e-5);
}

TEST(CpuOpsTest, SgdMomentumMatchesReference) {
  HyperParams hp;
  hp.optimizer = OptimizerKind::kSgd;
  hp.learning_rate = 0.1f;
  hp.momentum = 0.9f;
  hp.weight_decay = 0.01f;
  const size_t count = 20;
  std::vector<float> p = RandomVector(count, 11), vel(count, 0);
  std::vector<double> rp(p.begin(), p.end()), rv(count, 0);
  for (uint64_t step = 0; step < 4; ++step) {
    const std::vector<float> g = RandomVector(count, 20 + step);
    cpu::SgdStep(MakeOptimizerStep(hp, step), count, g.data(), p.data(),
                 vel.data());
    for (size_t k = 0; k < count; ++k) {
      rv[k] = 0.9 * rv[k] + g[k] + 0.01 * rp[k];
      rp[k] -= 0.1 * rv[k];
    }
  }
  for (size_t k = 0; k < count; ++k) EXPECT_NEAR(p[k], rp[k], 1e-5);
}

// Double-precision loss of the MLP (no dropout) at params.
double RefLoss(const ModelSpec& spec, const std::vector<double>& params,
               const std::vector<float>& x, const std::vector<float>& y,
               int n) {
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<double> a(x.begin() + i * spec.InputSize(),
                          x.begin() + (i + 1) * spec.InputSize());
    for (int l = 0; l < spec.NumLayers(); ++l) {
      const int din = spec.layer_sizes[l], dout = spec.layer_sizes[l + 1];
      std::vector<double> z(dout);
      for (int j = 0; j < dout; ++j) {
        double s = params[spec.BiasOffset(l) + j];
        for (int k = 0; k < din; ++k)
          s += a[k] * params[spec.WeightOffset(l) + k * dout + j];
        z[j] = s;
      }
      if (l + 1 < spec.NumLayers()) {
        for (double& v : z) v = RefActivate(spec.activation, v);
      }
      a = z;
    }
    if (spec.task == Task::kClassification) {
      double mx = -1e300, sum = 0;
      for (double v : a) mx = std::max(mx, v);
      for (double v : a) sum += std::exp(v - mx);
      loss -= a[static_cast<int>(y[i])] - mx - std::log(sum);
    } else {
      loss += (a[0] - y[i]) * (a[0] - y[i]);
    }
  }
  return loss / n;
}

struct GradCase {
  Task task;
  Activation act;
};

class GradientCheckTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradientCheckTest, MatchesFiniteDifferences) {
  ModelSpec spec;
  spec.task = GetParam().task;
  spec.activation = GetParam().act;
  spec.layer_sizes = {4, 6, 5, spec.task == Task::kClassification ? 3 : 1};
  HyperParams hp;
  hp.seed = 3;
  const int n = 8;
  std::vector<float> x = RandomVector(n * 4, 30, 1.5f), y(n);
  std::vector<float> ry = RandomVector(n, 31);
  for (int i = 0; i < n; ++i)
    y[i] = spec.task == Task::kClassification ? i % 3 : ry[i];
  TrainState state;
  state.params.resize(spec.NumParams());
  InitParams(spec, hp.seed, state.params.data());
  // Non-zero biases so every path is exercised.
  std::vector<float> noise = RandomVector(spec.NumParams(), 32, 0.1f);
  for (size_t k = 0; k < noise.size(); ++k) state.params[k] += noise[k];
  state.m.assign(spec.NumParams(), 0);
  state.v.assign(spec.NumParams(), 0);
  CpuBackend backend(spec, hp, 1, n);
  ASSERT_TRUE(backend.SetState(state).ok());
  std::vector<float> grad(spec.NumParams());
  const float loss =
      backend.ComputeGradients(x.data(), y.data(), n, 0, grad.data());
  std::vector<double> p(state.params.begin(), state.params.end());
  EXPECT_NEAR(loss, RefLoss(spec, p, x, y, n), 1e-4);
  const double h = 1e-6;
  for (size_t k = 0; k < p.size(); ++k) {
    std::vector<double> plus = p, minus = p;
    plus[k] += h;
    minus[k] -= h;
    const double fd =
        (RefLoss(spec, plus, x, y, n) - RefLoss(spec, minus, x, y, n)) /
        (2 * h);
    EXPECT_NEAR(grad[k], fd, 2e-4 + 1e-3 * std::fabs(fd)) << "param " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, GradientCheckTest,
    ::testing::Values(GradCase{Task::kClassification, Activation::kTanh},
                      GradCase{Task::kClassification, Activation::kGelu},
                      GradCase{Task::kClassification, Activation::kRelu},
                      GradCase{Task::kRegression, Activation::kTanh}));

TEST(CpuBackendTest, DropoutGradientUsesTheSameMask) {
  // With dropout the gradient equals that of the network whose hidden units
  // are scaled by the step's mask; check a weight of the last layer through
  // a finite difference of the backend's own dropout forward.
  ModelSpec spec;
  spec.activation = Activation::kTanh;
  spec.layer_sizes = {3, 8, 2};
  HyperParams hp;
  hp.dropout = 0.5f;
  hp.seed = 9;
  const int n = 4;
  std::vector<float> x = RandomVector(n * 3, 40), y = {0, 1, 1, 0};
  TrainState st;
  st.params.resize(spec.NumParams());
  InitParams(spec, hp.seed, st.params.data());
  st.m.assign(spec.NumParams(), 0);
  st.v.assign(spec.NumParams(), 0);
  CpuBackend backend(spec, hp, 1, n);
  ASSERT_TRUE(backend.SetState(st).ok());
  std::vector<float> grad(spec.NumParams()), scratch(spec.NumParams());
  backend.ComputeGradients(x.data(), y.data(), n, 5, grad.data());
  const float h = 1e-2f;
  for (size_t k :
       {size_t{0}, spec.WeightOffset(1) + 3, spec.BiasOffset(0) + 2}) {
    TrainState plus = st, minus = st;
    plus.params[k] += h;
    minus.params[k] -= h;
    ASSERT_TRUE(backend.SetState(plus).ok());
    const float lp =
        backend.ComputeGradients(x.data(), y.data(), n, 5, scratch.data());
    ASSERT_TRUE(backend.SetState(minus).ok());
    const float lm =
        backend.ComputeGradients(x.data(), y.data(), n, 5, scratch.data());
    EXPECT_NEAR(grad[k], (lp - lm) / (2 * h), 2e-3) << "param " << k;
  }
}

TEST(CpuBackendTest, ShardedGradientsMatchSingleThread) {
  // Threads split the batch into shards; dropout masks are indexed by batch
  // row, so only the summation order of the shard gradients differs.
  ModelSpec spec;
  spec.activation = Activation::kGelu;
  spec.layer_sizes = {10, 24, 12, 4};
  HyperParams hp;
  hp.dropout = 0.3f;
  const int n = 67;
  std::vector<float> x = RandomVector(n * 10, 60), y(n);
  for (int i = 0; i < n; ++i) y[i] = static_cast<float>(i % 4);
  TrainState st;
  st.params.resize(spec.NumParams());
  InitParams(spec, 2, st.params.data());
  st.m.assign(spec.NumParams(), 0);
  st.v.assign(spec.NumParams(), 0);
  std::vector<float> g1(spec.NumParams()), g3(spec.NumParams());
  CpuBackend one(spec, hp, 1, n), three(spec, hp, 3, n);
  ASSERT_TRUE(one.SetState(st).ok());
  ASSERT_TRUE(three.SetState(st).ok());
  const float l1 = one.ComputeGradients(x.data(), y.data(), n, 11, g1.data());
  const float l3 = three.ComputeGradients(x.data(), y.data(), n, 11, g3.data());
  EXPECT_NEAR(l1, l3, 1e-6f);
  for (size_t k = 0; k < g1.size(); ++k) ASSERT_NEAR(g1[k], g3[k], 1e-6f) << k;
  // And one Adam step stays within float rounding of the single-thread one.
  ASSERT_TRUE(one.TrainStep(x.data(), y.data(), n, 11).ok());
  ASSERT_TRUE(three.TrainStep(x.data(), y.data(), n, 11).ok());
  TrainState s1, s3;
  ASSERT_TRUE(one.GetState(&s1).ok());
  ASSERT_TRUE(three.GetState(&s3).ok());
  for (size_t k = 0; k < s1.params.size(); ++k) {
    ASSERT_NEAR(s1.params[k], s3.params[k], 1e-5f) << k;
  }
}

TEST(CpuBackendTest, TrainingIsBitReproducibleAndLearns) {
  ModelSpec spec;
  spec.layer_sizes = {6, 32, 32, 3};
  HyperParams hp;
  hp.learning_rate = 0.01f;
  hp.dropout = 0.1f;
  const int n = 48;
  std::vector<float> x = RandomVector(n * 6, 50), y(n);
  for (int i = 0; i < n; ++i)
    y[i] = static_cast<float>((x[i * 6] > 0) + (x[i * 6 + 1] > 0));
  auto run = [&](int threads) {
    TrainState st;
    st.params.resize(spec.NumParams());
    InitParams(spec, 1, st.params.data());
    st.m.assign(spec.NumParams(), 0);
    st.v.assign(spec.NumParams(), 0);
    CpuBackend b(spec, hp, threads, n);
    EXPECT_TRUE(b.SetState(st).ok());
    float first = 0, last = 0;
    for (int s = 0; s < 200; ++s) {
      last = *b.TrainStep(x.data(), y.data(), n, s);
      if (s == 0) first = last;
    }
    EXPECT_LT(last, first * 0.5f);
    EXPECT_TRUE(b.GetState(&st).ok());
    return st.params;
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_EQ(run(2), run(2));
}

}  // namespace
}  // namespace cairn::trainer
