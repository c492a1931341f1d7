// Benchmark of cairn-train's CPU backend: samples/s of full training steps
// (forward, backward, Adam) on an MLP, and the step's GFLOP/s against a plain
// Eigen GEMM of the same shapes (the practical ceiling on this machine).
// Usage: train_bench [--threads=2] [--batch=128] [--layers=784,256,256,10]
//                    [--seconds=3] [--backend=cpu|cuda]
// Prints one JSON object per line. With --backend=cuda (a GPU present) it
// times the CUDA backend's steps instead and reports their TFLOP/s; compare
// with the device's float32 peak (H100 SXM: about 67 TFLOP/s without TF32).
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "trainer/cpu_backend.h"

namespace {

using Clock = std::chrono::steady_clock;
using RowMat =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Multiply-adds of one step: forward Z = A W, weight grads A^T dZ, input
// grads dZ W^T (not for the first layer), 2 flops each.
double StepFlops(const std::vector<int>& sizes, int batch) {
  double f = 0;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    const double mnk = static_cast<double>(batch) * sizes[l] * sizes[l + 1];
    f += 2 * mnk * (l == 0 ? 2 : 3);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, batch = 128;
  double seconds = 3;
  std::string backend_name = "cpu";
  std::vector<int> sizes = {784, 256, 256, 10};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = value("--threads=")) {
      threads = std::atoi(v);
    } else if (const char* v = value("--batch=")) {
      batch = std::atoi(v);
    } else if (const char* v = value("--seconds=")) {
      seconds = std::atof(v);
    } else if (const char* v = value("--backend=")) {
      backend_name = v;
    } else if (const char* v = value("--layers=")) {
      sizes.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        int w;
        if (!absl::SimpleAtoi(s, &w)) return 2;
        sizes.push_back(w);
      }
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }

  cairn::trainer::ModelSpec spec;
  spec.layer_sizes = sizes;
  cairn::trainer::HyperParams hp;
  hp.optimizer = cairn::trainer::OptimizerKind::kAdam;
  hp.learning_rate = 1e-3f;
  std::unique_ptr<cairn::trainer::Backend> owned;
  if (backend_name == "cuda") {
    auto b = cairn::trainer::Backend::Create(cairn::trainer::BackendKind::kCuda,
                                             spec, hp, threads, batch);
    if (!b.ok()) {
      std::fprintf(stderr, "%s\n", b.status().ToString().c_str());
      return 1;
    }
    owned = std::move(*b);
  } else if (backend_name == "cpu") {
    owned =
        std::make_unique<cairn::trainer::CpuBackend>(spec, hp, threads, batch);
  } else {
    std::fprintf(stderr, "--backend must be cpu or cuda\n");
    return 2;
  }
  cairn::trainer::Backend& backend = *owned;
  cairn::trainer::TrainState st;
  st.params.resize(spec.NumParams());
  cairn::trainer::InitParams(spec, 1, st.params.data());
  st.m.assign(spec.NumParams(), 0);
  st.v.assign(spec.NumParams(), 0);
  if (!backend.SetState(st).ok()) return 1;

  const int nbatches = 16;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> x(static_cast<size_t>(nbatches) * batch * sizes[0]);
  std::vector<float> y(static_cast<size_t>(nbatches) * batch);
  for (float& v : x) v = nd(rng);
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>(i % sizes.back());

  auto run_steps = [&](int steps, uint64_t first) {
    for (int s = 0; s < steps; ++s) {
      const size_t b = (first + s) % nbatches;
      auto loss = backend.TrainStep(x.data() + b * batch * sizes[0],
                                    y.data() + b * batch, batch, first + s);
      if (!loss.ok()) std::abort();
    }
  };
  run_steps(20, 0);  // Warm-up.
  int steps = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0, Clock::now()) < seconds) {
    run_steps(10, 20 + steps);
    steps += 10;
  }
  const double train_s = Seconds(t0, Clock::now());
  const double flops = StepFlops(sizes, batch);
  const double train_sps = steps * static_cast<double>(batch) / train_s;
  const double train_gflops = steps * flops / train_s / 1e9;

  if (backend_name == "cuda") {
    // Each step includes the batch upload and the loss download.
    std::printf(
        "{\"bench\": \"cairn_train_cuda\", \"layers\": \"%s\", \"batch\": %d, "
        "\"optimizer\": \"adam\", \"steps\": %d, \"samples_per_s\": %.0f, "
        "\"step_tflops\": %.3f}\n",
        absl::StrJoin(sizes, "-").c_str(), batch, steps, train_sps,
        train_gflops / 1e3);
    return 0;
  }

  // The same products with plain Eigen: the ceiling for the step.
  std::vector<RowMat> a, w, z, dz, da, dw;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    a.push_back(RowMat::Random(batch, sizes[l]));
    w.push_back(RowMat::Random(sizes[l], sizes[l + 1]));
    z.push_back(RowMat::Zero(batch, sizes[l + 1]));
    dz.push_back(RowMat::Random(batch, sizes[l + 1]));
    da.push_back(RowMat::Zero(batch, sizes[l]));
    dw.push_back(RowMat::Zero(sizes[l], sizes[l + 1]));
  }
  auto gemms = [&] {
    for (size_t l = 0; l + 1 < sizes.size(); ++l) {
      z[l].noalias() = a[l] * w[l];
      dw[l].noalias() = a[l].transpose() * dz[l];
      if (l > 0) da[l].noalias() = dz[l] * w[l].transpose();
    }
  };
  auto gemm_gflops = [&](int nb_threads) {
    Eigen::setNbThreads(nb_threads);
    for (int i = 0; i < 20; ++i) gemms();
    int reps = 0;
    const auto t1 = Clock::now();
    while (Seconds(t1, Clock::now()) < seconds) {
      for (int i = 0; i < 10; ++i) gemms();
      reps += 10;
    }
    return reps * flops / Seconds(t1, Clock::now()) / 1e9;
  };
  // Eigen's GEMM on one thread, and its own (OpenMP) parallel GEMM with the
  // same thread count; the ceiling is the faster of the two.
  const double gemm1 = gemm_gflops(1);
  const double gemmn = threads > 1 ? gemm_gflops(threads) : gemm1;
  const double gemm_best = std::max(gemm1, gemmn);

  std::printf(
      "{\"bench\": \"cairn_train_cpu\", \"layers\": \"%s\", \"batch\": %d, "
      "\"threads\": %d, \"optimizer\": \"adam\", \"steps\": %d, "
      "\"samples_per_s\": %.0f, \"step_gflops\": %.2f, "
      "\"eigen_gemm_gflops_1thread\": %.2f, \"eigen_gemm_gflops_nthreads\": "
      "%.2f, \"eigen_gemm_gflops\": %.2f, \"fraction_of_gemm\": %.3f}\n",
      absl::StrJoin(sizes, "-").c_str(), batch, threads, steps, train_sps,
      train_gflops, gemm1, gemmn, gemm_best, train_gflops / gemm_best);
  return 0;
}
