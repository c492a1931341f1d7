// Every CUDA kernel of cairn-train against its CPU reference (cpu_ops.h and
// the Eigen backend). Skipped, with a message, when no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "trainer/backend.h"
#include "trainer/cpu_backend.h"
#include "trainer/cpu_ops.h"
#include "trainer/cuda_bias_act.h"
#include "trainer/cuda_dropout.h"
#include "trainer/cuda_loss.h"
#include "trainer/cuda_matmul.h"
#include "trainer/cuda_optimizer.h"
#include "trainer/cuda_util.h"

namespace cairn::trainer {
namespace {

using cuda::DeviceBuffer;

std::vector<float> RandomVector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

class CudaKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) {
      GTEST_SKIP() << "no CUDA device present: CUDA kernel tests skipped "
                      "(they run against the CPU reference when a GPU is lent)";
    }
  }
  DeviceBuffer Upload(const std::vector<float>& v) {
    DeviceBuffer b;
    EXPECT_TRUE(b.Allocate(v.size()).ok());
    EXPECT_TRUE(b.CopyFromHost(v.data(), v.size()).ok());
    return b;
  }
  std::vector<float> Download(const DeviceBuffer& b) {
    std::vector<float> v(b.size());
    EXPECT_TRUE(b.CopyToHost(v.data(), v.size()).ok());
    return v;
  }
  static void ExpectNear(const std::vector<float>& a,
                         const std::vector<float>& b, float tol) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_NEAR(a[k], b[k], tol * (1.0f + std::fabs(b[k]))) << "index " << k;
    }
  }
};

TEST_F(CudaKernelTest, BiasActivationForwardAndBackward) {
  const int n = 33, d = 70;
  for (Activation act :
       {Activation::kRelu, Activation::kTanh, Activation::kGelu}) {
    std::vector<float> z = RandomVector(n * d, 1, 3), bias = RandomVector(d, 2);
    std::vector<float> a(n * d), da = RandomVector(n * d, 3),
                                 mask = RandomVector(n * d, 4);
    DeviceBuffer gz = Upload(z), gb = Upload(bias), ga = Upload(a);
    ASSERT_TRUE(cuda::LaunchBiasActivationForward(nullptr, n, d, gb.get(), act,
                                                  gz.get(), ga.get())
                    .ok());
    cpu::BiasActivationForward(n, d, bias.data(), act, z.data(), a.data());
    ExpectNear(Download(gz), z, 1e-6f);
    ExpectNear(Download(ga), a, 1e-5f);
    // Backward with the dropout multipliers folded in.
    DeviceBuffer gda = Upload(da), gmask = Upload(mask),
                 gdz = Upload(std::vector<float>(n * d));
    ASSERT_TRUE(cuda::LaunchActivationBackward(nullptr, n, d, act, gz.get(),
                                               gda.get(), gmask.get(),
                                               gdz.get())
                    .ok());
    std::vector<float> masked(n * d), dz(n * d);
    for (int k = 0; k < n * d; ++k) masked[k] = da[k] * mask[k];
    cpu::ActivationBackward(n, d, act, z.data(), masked.data(), dz.data());
    ExpectNear(Download(gdz), dz, 1e-5f);
  }
}

TEST_F(CudaKernelTest, BiasGrad) {
  const int n = 129, d = 45;
  std::vector<float> dz = RandomVector(n * d, 5), db(d);
  DeviceBuffer gdz = Upload(dz), gdb = Upload(db);
  ASSERT_TRUE(cuda::LaunchBiasGrad(nullptr, n, d, gdz.get(), gdb.get()).ok());
  cpu::BiasGrad(n, d, dz.data(), db.data());
  ExpectNear(Download(gdb), db, 1e-5f);
}

TEST_F(CudaKernelTest, DropoutMasksAreIdenticalToCpu) {
  const int n = 64, d = 300;
  std::vector<float> a = RandomVector(n * d, 6), mask(n * d);
  DeviceBuffer ga = Upload(a), gm = Upload(mask);
  ASSERT_TRUE(cuda::LaunchDropoutForward(nullptr, n, d, 77, 1234, 2, 0.35f,
                                         ga.get(), gm.get())
                  .ok());
  cpu::DropoutForward(n, d, 77, 1234, 2, 0.35f, a.data(), mask.data());
  EXPECT_EQ(Download(gm), mask);  // Bit-identical: same counter-based RNG.
  ExpectNear(Download(ga), a, 1e-7f);
}

TEST_F(CudaKernelTest, SoftmaxCrossEntropySoftmaxAndMse) {
  const int n = 50, c = 10;
  std::vector<float> logits = RandomVector(n * c, 7, 5), labels(n), g(n * c),
                     rows(n);
  for (int i = 0; i < n; ++i) labels[i] = static_cast<float>((i * 7) % c);
  DeviceBuffer gl = Upload(logits), gy = Upload(labels), gg = Upload(g),
               gr = Upload(rows);
  ASSERT_TRUE(cuda::LaunchSoftmaxCrossEntropy(nullptr, n, c, gy.get(), gl.get(),
                                              gg.get(), gr.get())
                  .ok());
  std::vector<float> plain = logits;
  const double loss =
      cpu::SoftmaxCrossEntropy(n, c, labels.data(), logits.data(), g.data());
  ExpectNear(Download(gl), logits, 1e-5f);
  ExpectNear(Download(gg), g, 1e-5f);
  double gpu_loss = 0;
  for (float v : Download(gr)) gpu_loss += v;
  EXPECT_NEAR(gpu_loss, loss, 1e-4 * (1 + loss));

  DeviceBuffer gp = Upload(plain);
  ASSERT_TRUE(cuda::LaunchSoftmax(nullptr, n, c, gp.get()).ok());
  cpu::Softmax(n, c, plain.data());
  ExpectNear(Download(gp), plain, 1e-5f);

  std::vector<float> out = RandomVector(n, 8), y = RandomVector(n, 9), dout(n);
  DeviceBuffer go = Upload(out), gty = Upload(y), gd = Upload(dout),
               gl2 = Upload(rows);
  ASSERT_TRUE(cuda::LaunchMeanSquaredError(nullptr, n, go.get(), gty.get(),
                                           gd.get(), gl2.get())
                  .ok());
  const double mse =
      cpu::MeanSquaredError(n, out.data(), y.data(), dout.data());
  ExpectNear(Download(gd), dout, 1e-6f);
  double gpu_mse = 0;
  for (float v : Download(gl2)) gpu_mse += v;
  EXPECT_NEAR(gpu_mse, mse, 1e-5 * (1 + mse));
}

TEST_F(CudaKernelTest, OptimizerUpdates) {
  const size_t count = 1000;
  HyperParams hp;
  hp.learning_rate = 0.01f;
  hp.weight_decay = 0.05f;
  hp.momentum = 0.9f;
  const OptimizerStep s = MakeOptimizerStep(hp, 4);
  std::vector<float> g = RandomVector(count, 10), p = RandomVector(count, 11),
                     m = RandomVector(count, 12, 0.1f),
                     v = RandomVector(count, 13, 0.1f);
  for (float& x : v) x = std::fabs(x);
  DeviceBuffer gg = Upload(g), gp = Upload(p), gm = Upload(m), gv = Upload(v);
  ASSERT_TRUE(cuda::LaunchAdamStep(nullptr, s, count, gg.get(), gp.get(),
                                   gm.get(), gv.get())
                  .ok());
  cpu::AdamStep(s, count, g.data(), p.data(), m.data(), v.data());
  ExpectNear(Download(gp), p, 1e-6f);
  ExpectNear(Download(gm), m, 1e-6f);
  ExpectNear(Download(gv), v, 1e-6f);
  ASSERT_TRUE(
      cuda::LaunchSgdStep(nullptr, s, count, gg.get(), gp.get(), gm.get())
          .ok());
  cpu::SgdStep(s, count, g.data(), p.data(), m.data());
  ExpectNear(Download(gp), p, 1e-6f);
  ExpectNear(Download(gm), m, 1e-6f);
}

TEST_F(CudaKernelTest, MatmulsMatchNaiveProducts) {
  const int n = 37, in = 53, out = 29;
  cublasHandle_t h;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
  std::vector<float> a = RandomVector(n * in, 14),
                     w = RandomVector(in * out, 15),
                     dz = RandomVector(n * out, 16);
  DeviceBuffer ga = Upload(a), gw = Upload(w), gdz = Upload(dz);
  DeviceBuffer gz = Upload(std::vector<float>(n * out)),
               gdw = Upload(std::vector<float>(in * out)),
               gda = Upload(std::vector<float>(n * in));
  ASSERT_TRUE(
      cuda::MatmulForward(h, n, in, out, ga.get(), gw.get(), gz.get()).ok());
  ASSERT_TRUE(
      cuda::MatmulGradWeight(h, n, in, out, ga.get(), gdz.get(), gdw.get())
          .ok());
  ASSERT_TRUE(
      cuda::MatmulGradInput(h, n, in, out, gdz.get(), gw.get(), gda.get())
          .ok());
  std::vector<float> z(n * out), dw(in * out), da(n * in);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < out; ++j) {
      double s = 0;
      for (int k = 0; k < in; ++k) s += a[i * in + k] * w[k * out + j];
      z[i * out + j] = s;
    }
  for (int k = 0; k < in; ++k)
    for (int j = 0; j < out; ++j) {
      double s = 0;
      for (int i = 0; i < n; ++i) s += a[i * in + k] * dz[i * out + j];
      dw[k * out + j] = s;
    }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < in; ++k) {
      double s = 0;
      for (int j = 0; j < out; ++j) s += dz[i * out + j] * w[k * out + j];
      da[i * in + k] = s;
    }
  ExpectNear(Download(gz), z, 1e-4f);
  ExpectNear(Download(gdw), dw, 1e-4f);
  ExpectNear(Download(gda), da, 1e-4f);
  cublasDestroy(h);
  // Shape checks become errors, not crashes.
  EXPECT_EQ(
      cuda::MatmulForward(nullptr, 0, 1, 1, nullptr, nullptr, nullptr).code(),
      absl::StatusCode::kInvalidArgument);
}

TEST_F(CudaKernelTest, BackendTrainingTracksCpuBackend) {
  ModelSpec spec;
  spec.activation = Activation::kGelu;
  spec.layer_sizes = {12, 64, 32, 4};
  // SGD keeps the update linear in the gradient, so float rounding
  // differences between cuBLAS and Eigen stay small (Adam's normalization
  // could amplify them for near-zero gradients); Adam itself is compared
  // kernel-to-kernel above.
  HyperParams hp;
  hp.optimizer = OptimizerKind::kSgd;
  hp.learning_rate = 0.05f;
  hp.momentum = 0.9f;
  hp.dropout = 0.25f;
  hp.weight_decay = 0.01f;
  const int n = 40;
  std::vector<float> x = RandomVector(n * 12, 17), y(n);
  for (int i = 0; i < n; ++i) y[i] = static_cast<float>(i % 4);
  TrainState st;
  st.params.resize(spec.NumParams());
  InitParams(spec, 5, st.params.data());
  st.m.assign(spec.NumParams(), 0);
  st.v.assign(spec.NumParams(), 0);
  absl::StatusOr<std::unique_ptr<Backend>> gpu =
      Backend::Create(BackendKind::kCuda, spec, hp, 1, n);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  CpuBackend cpu(spec, hp, 1, n);
  ASSERT_TRUE((*gpu)->SetState(st).ok());
  ASSERT_TRUE(cpu.SetState(st).ok());
  for (uint64_t step = 0; step < 5; ++step) {
    absl::StatusOr<float> lg = (*gpu)->TrainStep(x.data(), y.data(), n, step);
    absl::StatusOr<float> lc = cpu.TrainStep(x.data(), y.data(), n, step);
    ASSERT_TRUE(lg.ok()) << lg.status();
    EXPECT_NEAR(*lg, *lc, 1e-4f * (1 + *lc)) << "step " << step;
  }
  TrainState sg, sc;
  ASSERT_TRUE((*gpu)->GetState(&sg).ok());
  ASSERT_TRUE(cpu.GetState(&sc).ok());
  ExpectNear(sg.params, sc.params, 1e-3f);
  std::vector<float> pg(n * 4), pc(n * 4);
  ASSERT_TRUE((*gpu)->Forward(x.data(), n, pg.data()).ok());
  ASSERT_TRUE(cpu.Forward(x.data(), n, pc.data()).ok());
  ExpectNear(pg, pc, 1e-3f);
}

TEST(CudaDeviceTest, AutoBackendFallsBackToCpuWithoutDevice) {
  ModelSpec spec;
  spec.layer_sizes = {2, 3, 2};
  absl::StatusOr<std::unique_ptr<Backend>> b =
      Backend::Create(BackendKind::kAuto, spec, HyperParams(), 1, 4);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->Name(), CudaDeviceCount() > 0 ? "cuda" : "cpu");
  if (CudaDeviceCount() == 0) {
    absl::StatusOr<std::unique_ptr<Backend>> c =
        Backend::Create(BackendKind::kCuda, spec, HyperParams(), 1, 4);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace cairn::trainer
