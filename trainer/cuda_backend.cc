// CUDA implementation of Backend (see cuda_backend.h).
#include "trainer/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "trainer/cuda_bias_act.h"
#include "trainer/cuda_dropout.h"
#include "trainer/cuda_loss.h"
#include "trainer/cuda_matmul.h"
#include "trainer/cuda_optimizer.h"
#include "trainer/cuda_util.h"

#define CAIRN_RETURN_IF_ERROR(expr) \
  do {                              \
    absl::Status _s = (expr);       \
    if (!_s.ok()) return _s;        \
  } while (0)

namespace cairn::trainer {

int cuda::DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // Clear the sticky "no device" error.
    return 0;
  }
  return count;
}

namespace {

using cuda::DeviceBuffer;

// Not thread-safe; owns its stream, cuBLAS handle and device buffers.
class CudaBackend final : public Backend {
 public:
  CudaBackend(const ModelSpec& spec, const HyperParams& hp, int max_batch)
      : spec_(spec), hp_(hp), max_batch_(max_batch) {}

  ~CudaBackend() override {
    if (handle_ != nullptr) cublasDestroy(handle_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  absl::Status Init() {
    CAIRN_RETURN_IF_ERROR(cuda::CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
    CAIRN_RETURN_IF_ERROR(
        cuda::CudaStatus(cudaStreamCreate(&stream_), "cudaStreamCreate"));
    CAIRN_RETURN_IF_ERROR(
        cuda::CublasStatus(cublasCreate(&handle_), "cublasCreate"));
    CAIRN_RETURN_IF_ERROR(cuda::CublasStatus(cublasSetStream(handle_, stream_),
                                             "cublasSetStream"));
    // Pedantic math: no TF32, so results track the float32 CPU reference.
    CAIRN_RETURN_IF_ERROR(cuda::CublasStatus(
        cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode"));
    const size_t np = spec_.NumParams();
    CAIRN_RETURN_IF_ERROR(params_.Allocate(np));
    CAIRN_RETURN_IF_ERROR(m_.Allocate(np));
    CAIRN_RETURN_IF_ERROR(v_.Allocate(np));
    CAIRN_RETURN_IF_ERROR(grad_.Allocate(np));
    const int layers = spec_.NumLayers();
    z_.resize(layers);
    a_.resize(layers);
    mask_.resize(layers);
    dz_.resize(layers);
    int widest = spec_.InputSize();
    for (int l = 0; l < layers; ++l) {
      const size_t sz =
          static_cast<size_t>(max_batch_) * spec_.layer_sizes[l + 1];
      CAIRN_RETURN_IF_ERROR(z_[l].Allocate(sz));
      CAIRN_RETURN_IF_ERROR(dz_[l].Allocate(sz));
      if (l + 1 < layers) {
        CAIRN_RETURN_IF_ERROR(a_[l].Allocate(sz));
        if (hp_.dropout > 0.0f) CAIRN_RETURN_IF_ERROR(mask_[l].Allocate(sz));
      }
      widest = std::max(widest, spec_.layer_sizes[l + 1]);
    }
    CAIRN_RETURN_IF_ERROR(
        da_.Allocate(static_cast<size_t>(max_batch_) * widest));
    CAIRN_RETURN_IF_ERROR(
        x_.Allocate(static_cast<size_t>(max_batch_) * spec_.InputSize()));
    CAIRN_RETURN_IF_ERROR(y_.Allocate(max_batch_));
    CAIRN_RETURN_IF_ERROR(row_loss_.Allocate(max_batch_));
    return absl::OkStatus();
  }

  std::string Name() const override { return "cuda"; }

  absl::Status SetState(const TrainState& state) override {
    const size_t np = spec_.NumParams();
    if (state.params.size() != np || state.m.size() != np ||
        state.v.size() != np) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state has ", state.params.size(), " parameters, model needs ", np));
    }
    CAIRN_RETURN_IF_ERROR(params_.CopyFromHost(state.params.data(), np));
    CAIRN_RETURN_IF_ERROR(m_.CopyFromHost(state.m.data(), np));
    return v_.CopyFromHost(state.v.data(), np);
  }

  absl::Status GetState(TrainState* state) override {
    const size_t np = spec_.NumParams();
    state->params.resize(np);
    state->m.resize(np);
    state->v.resize(np);
    CAIRN_RETURN_IF_ERROR(params_.CopyToHost(state->params.data(), np));
    CAIRN_RETURN_IF_ERROR(m_.CopyToHost(state->m.data(), np));
    return v_.CopyToHost(state->v.data(), np);
  }

  absl::StatusOr<float> TrainStep(const float* x, const float* y, int n,
                                  uint64_t step) override {
    CAIRN_RETURN_IF_ERROR(CheckBatch(n));
    CAIRN_RETURN_IF_ERROR(
        x_.CopyFromHost(x, static_cast<size_t>(n) * spec_.InputSize()));
    CAIRN_RETURN_IF_ERROR(y_.CopyFromHost(y, n));
    CAIRN_RETURN_IF_ERROR(RunForward(n, /*train=*/true, step));
    const int layers = spec_.NumLayers();
    const int dout = spec_.OutputSize();
    if (spec_.task == Task::kClassification) {
      CAIRN_RETURN_IF_ERROR(cuda::LaunchSoftmaxCrossEntropy(
          stream_, n, dout, y_.get(), z_[layers - 1].get(),
          dz_[layers - 1].get(), row_loss_.get()));
    } else {
      CAIRN_RETURN_IF_ERROR(cuda::LaunchMeanSquaredError(
          stream_, n, z_[layers - 1].get(), y_.get(), dz_[layers - 1].get(),
          row_loss_.get()));
    }
    for (int l = layers - 1; l >= 0; --l) {
      const int din = spec_.layer_sizes[l], dl = spec_.layer_sizes[l + 1];
      const float* in = l == 0 ? x_.get() : a_[l - 1].get();
      CAIRN_RETURN_IF_ERROR(
          cuda::MatmulGradWeight(handle_, n, din, dl, in, dz_[l].get(),
                                 grad_.get() + spec_.WeightOffset(l)));
      CAIRN_RETURN_IF_ERROR(cuda::LaunchBiasGrad(
          stream_, n, dl, dz_[l].get(), grad_.get() + spec_.BiasOffset(l)));
      if (l == 0) break;
      CAIRN_RETURN_IF_ERROR(cuda::MatmulGradInput(
          handle_, n, din, dl, dz_[l].get(),
          params_.get() + spec_.WeightOffset(l), da_.get()));
      CAIRN_RETURN_IF_ERROR(cuda::LaunchActivationBackward(
          stream_, n, din, spec_.activation, z_[l - 1].get(), da_.get(),
          hp_.dropout > 0.0f ? mask_[l - 1].get() : nullptr, dz_[l - 1].get()));
    }
    const OptimizerStep s = MakeOptimizerStep(hp_, step);
    if (hp_.optimizer == OptimizerKind::kAdam) {
      CAIRN_RETURN_IF_ERROR(cuda::LaunchAdamStep(stream_, s, spec_.NumParams(),
                                                 grad_.get(), params_.get(),
                                                 m_.get(), v_.get()));
    } else {
      CAIRN_RETURN_IF_ERROR(cuda::LaunchSgdStep(
          stream_, s, spec_.NumParams(), grad_.get(), params_.get(), m_.get()));
    }
    std::vector<float> losses(n);
    CAIRN_RETURN_IF_ERROR(row_loss_.CopyToHost(losses.data(), n));
    double sum = 0.0;
    for (float v : losses) sum += v;
    return static_cast<float>(sum / n);
  }

  absl::Status Forward(const float* x, int n, float* out) override {
    CAIRN_RETURN_IF_ERROR(CheckBatch(n));
    CAIRN_RETURN_IF_ERROR(
        x_.CopyFromHost(x, static_cast<size_t>(n) * spec_.InputSize()));
    CAIRN_RETURN_IF_ERROR(RunForward(n, /*train=*/false, 0));
    const int dout = spec_.OutputSize();
    float* logits = z_.back().get();
    if (spec_.task == Task::kClassification) {
      CAIRN_RETURN_IF_ERROR(cuda::LaunchSoftmax(stream_, n, dout, logits));
    }
    return z_.back().CopyToHost(out, static_cast<size_t>(n) * dout);
  }

 private:
  absl::Status CheckBatch(int n) const {
    if (n <= 0 || n > max_batch_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch of ", n, " rows; backend allows 1..", max_batch_));
    }
    return absl::OkStatus();
  }

  absl::Status RunForward(int n, bool train, uint64_t step) {
    const int layers = spec_.NumLayers();
    const float* in = x_.get();
    for (int l = 0; l < layers; ++l) {
      const int din = spec_.layer_sizes[l], dl = spec_.layer_sizes[l + 1];
      CAIRN_RETURN_IF_ERROR(cuda::MatmulForward(
          handle_, n, din, dl, in, params_.get() + spec_.WeightOffset(l),
          z_[l].get()));
      const float* b = params_.get() + spec_.BiasOffset(l);
      const bool hidden = l + 1 < layers;
      CAIRN_RETURN_IF_ERROR(cuda::LaunchBiasActivationForward(
          stream_, n, dl, b, spec_.activation, z_[l].get(),
          hidden ? a_[l].get() : nullptr));
      if (hidden && train && hp_.dropout > 0.0f) {
        CAIRN_RETURN_IF_ERROR(cuda::LaunchDropoutForward(
            stream_, n, dl, hp_.seed, step, static_cast<uint32_t>(l),
            hp_.dropout, a_[l].get(), mask_[l].get()));
      }
      if (hidden) in = a_[l].get();
    }
    return absl::OkStatus();
  }

  const ModelSpec spec_;
  const HyperParams hp_;
  const int max_batch_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer params_, m_, v_, grad_, da_, x_, y_, row_loss_;
  std::vector<DeviceBuffer> z_, a_, mask_, dz_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> cuda::CreateBackend(
    const ModelSpec& spec, const HyperParams& hp, int max_batch) {
  if (DeviceCount() == 0) {
    return absl::FailedPreconditionError(
        "--backend=cuda: no CUDA device is present");
  }
  auto backend = std::make_unique<CudaBackend>(spec, hp, max_batch);
  absl::Status s = backend->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace cairn::trainer
