// Eigen implementation of the MLP training step (see cpu_backend.h).
#include "trainer/cpu_backend.h"

#include <Eigen/Core>
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "trainer/cpu_ops.h"

namespace cairn::trainer {
namespace {

using RowMat =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMat>;
using ConstMap = Eigen::Map<const RowMat>;

// Fewer rows than this per shard make the GEMMs too thin to be worth a thread.
constexpr int kMinShardRows = 16;

}  // namespace

// Persistent workers for CpuBackend::Parallel. Worker w runs task w + 1.
class CpuBackend::Pool {
 public:
  explicit Pool(int workers) {
    for (int w = 0; w < workers; ++w)
      threads_.emplace_back([this, w] { Loop(w); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    start_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void Run(int count, const std::function<void(int)>& fn) {
    {
      std::lock_guard<std::mutex> l(mu_);
      fn_ = &fn;
      count_ = count;
      pending_ = std::min<int>(count - 1, static_cast<int>(threads_.size()));
      ++generation_;
    }
    start_cv_.notify_all();
    fn(0);
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [this] { return pending_ == 0; });
    fn_ = nullptr;
  }

 private:
  void Loop(int w) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* fn;
      {
        std::unique_lock<std::mutex> l(mu_);
        start_cv_.wait(l, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (w + 1 >= count_) continue;
        fn = fn_;
      }
      (*fn)(w + 1);
      std::lock_guard<std::mutex> l(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  // State below is protected by mu_.
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  int count_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// Activations and gradients of one shard: per layer l, pre-activations z[l],
// activations a[l] (hidden only), dropout multipliers mask[l] (hidden only),
// gradients dz[l]; da is scratch; grad is the shard's parameter gradient
// (unused by shard 0, which writes the backend's own buffer).
struct CpuBackend::Workspace {
  std::vector<std::vector<float>> z, a, mask, dz;
  std::vector<float> da, grad;
};

CpuBackend::CpuBackend(const ModelSpec& spec, const HyperParams& hp,
                       int threads, int max_batch)
    : spec_(spec),
      hp_(hp),
      threads_(std::max(1, threads)),
      max_batch_(max_batch) {
  // Parallelism is across shards; each GEMM runs on one thread.
  Eigen::setNbThreads(1);
  const size_t np = spec_.NumParams();
  state_.params.assign(np, 0.0f);
  state_.m.assign(np, 0.0f);
  state_.v.assign(np, 0.0f);
  grad_.assign(np, 0.0f);
  const int layers = spec_.NumLayers();
  int widest = 0;
  for (int l = 0; l < layers; ++l)
    widest = std::max(widest, spec_.layer_sizes[l + 1]);
  for (int t = 0; t < threads_; ++t) {
    // Shard t never holds more rows than this.
    const int rows =
        t == 0 ? max_batch : (max_batch + threads_ - 1) / threads_ + 1;
    auto ws = std::make_unique<Workspace>();
    ws->z.resize(layers);
    ws->a.resize(layers);
    ws->mask.resize(layers);
    ws->dz.resize(layers);
    for (int l = 0; l < layers; ++l) {
      const size_t sz = static_cast<size_t>(rows) * spec_.layer_sizes[l + 1];
      ws->z[l].assign(sz, 0.0f);
      ws->dz[l].assign(sz, 0.0f);
      if (l + 1 < layers) {
        ws->a[l].assign(sz, 0.0f);
        if (hp_.dropout > 0.0f) ws->mask[l].assign(sz, 1.0f);
      }
    }
    ws->da.assign(static_cast<size_t>(rows) * widest, 0.0f);
    if (t > 0) ws->grad.assign(np, 0.0f);
    ws_.push_back(std::move(ws));
  }
  if (threads_ > 1) pool_ = std::make_unique<Pool>(threads_ - 1);
}

CpuBackend::~CpuBackend() = default;

absl::Status CpuBackend::SetState(const TrainState& state) {
  const size_t np = spec_.NumParams();
  if (state.params.size() != np || state.m.size() != np ||
      state.v.size() != np) {
    return absl::InvalidArgumentError(absl::StrCat(
        "state has ", state.params.size(), " parameters, model needs ", np));
  }
  state_ = state;
  return absl::OkStatus();
}

absl::Status CpuBackend::GetState(TrainState* state) {
  *state = state_;
  return absl::OkStatus();
}

void CpuBackend::Parallel(int count, const std::function<void(int)>& fn) {
  if (count <= 1 || !pool_) {
    for (int s = 0; s < count; ++s) fn(s);
    return;
  }
  pool_->Run(count, fn);
}

int CpuBackend::Shards(int n) const {
  return std::max(1, std::min(threads_, n / kMinShardRows));
}

int CpuBackend::ShardBegin(int n, int shards, int s) const {
  // The first n % shards shards get one extra row.
  const int base = n / shards, extra = n % shards;
  return s * base + std::min(s, extra);
}

void CpuBackend::RunForward(Workspace& ws, const float* x, int n, bool train,
                            uint64_t step, int row0) {
  const int layers = spec_.NumLayers();
  const float* in = x;
  for (int l = 0; l < layers; ++l) {
    const int din = spec_.layer_sizes[l], dout = spec_.layer_sizes[l + 1];
    ConstMap a_in(in, n, din);
    ConstMap w(state_.params.data() + spec_.WeightOffset(l), din, dout);
    Map z(ws.z[l].data(), n, dout);
    z.noalias() = a_in * w;
    const float* b = state_.params.data() + spec_.BiasOffset(l);
    if (l + 1 < layers) {
      cpu::BiasActivationForward(n, dout, b, spec_.activation, ws.z[l].data(),
                                 ws.a[l].data());
      if (train && hp_.dropout > 0.0f) {
        cpu::DropoutForward(n, dout, hp_.seed, step, static_cast<uint32_t>(l),
                            hp_.dropout, ws.a[l].data(), ws.mask[l].data(),
                            static_cast<size_t>(row0) * dout);
      }
      in = ws.a[l].data();
    } else {
      float* zr = ws.z[l].data();
      for (int i = 0; i < n; ++i) {
        float* row = zr + static_cast<size_t>(i) * dout;
        for (int j = 0; j < dout; ++j) row[j] += b[j];
      }
    }
  }
}

double CpuBackend::RunShard(Workspace& ws, const float* x, const float* y,
                            int row0, int rows, int total, uint64_t step,
                            float* grad) {
  const int nf = spec_.InputSize();
  x += static_cast<size_t>(row0) * nf;
  y += row0;
  RunForward(ws, x, rows, /*train=*/true, step, row0);
  const int layers = spec_.NumLayers();
  const int dout = spec_.OutputSize();
  double loss_sum;
  if (spec_.task == Task::kClassification) {
    loss_sum = cpu::SoftmaxCrossEntropy(rows, dout, y, ws.z[layers - 1].data(),
                                        ws.dz[layers - 1].data(), total);
  } else {
    loss_sum = cpu::MeanSquaredError(rows, ws.z[layers - 1].data(), y,
                                     ws.dz[layers - 1].data(), total);
  }
  for (int l = layers - 1; l >= 0; --l) {
    const int din = spec_.layer_sizes[l], dl = spec_.layer_sizes[l + 1];
    const float* in = l == 0 ? x : ws.a[l - 1].data();
    ConstMap a_in(in, rows, din);
    ConstMap dz(ws.dz[l].data(), rows, dl);
    Map dw(grad + spec_.WeightOffset(l), din, dl);
    dw.noalias() = a_in.transpose() * dz;
    cpu::BiasGrad(rows, dl, ws.dz[l].data(), grad + spec_.BiasOffset(l));
    if (l == 0) break;
    ConstMap w(state_.params.data() + spec_.WeightOffset(l), din, dl);
    Map da(ws.da.data(), rows, din);
    da.noalias() = dz * w.transpose();
    if (hp_.dropout > 0.0f) {
      const size_t count = static_cast<size_t>(rows) * din;
      const float* mk = ws.mask[l - 1].data();
      float* d = ws.da.data();
      for (size_t k = 0; k < count; ++k) d[k] *= mk[k];
    }
    cpu::ActivationBackward(rows, din, spec_.activation, ws.z[l - 1].data(),
                            ws.da.data(), ws.dz[l - 1].data());
  }
  return loss_sum;
}

float CpuBackend::ComputeGradients(const float* x, const float* y, int n,
                                   uint64_t step, float* grad) {
  const int shards = Shards(n);
  std::vector<double> losses(shards, 0.0);
  Parallel(shards, [&](int s) {
    const int r0 = ShardBegin(n, shards, s), r1 = ShardBegin(n, shards, s + 1);
    losses[s] = RunShard(*ws_[s], x, y, r0, r1 - r0, n, step,
                         s == 0 ? grad : ws_[s]->grad.data());
  });
  double loss = 0.0;
  for (double l : losses) loss += l;
  if (shards > 1) {
    const size_t np = spec_.NumParams();
    for (int s = 1; s < shards; ++s) {
      const float* g = ws_[s]->grad.data();
      for (size_t k = 0; k < np; ++k) grad[k] += g[k];
    }
  }
  return static_cast<float>(loss / n);
}

absl::StatusOr<float> CpuBackend::TrainStep(const float* x, const float* y,
                                            int n, uint64_t step) {
  if (n <= 0 || n > max_batch_) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch of ", n, " rows; backend allows 1..", max_batch_));
  }
  const int shards = Shards(n);
  std::vector<double> losses(shards, 0.0);
  Parallel(shards, [&](int s) {
    const int r0 = ShardBegin(n, shards, s), r1 = ShardBegin(n, shards, s + 1);
    losses[s] = RunShard(*ws_[s], x, y, r0, r1 - r0, n, step,
                         s == 0 ? grad_.data() : ws_[s]->grad.data());
  });
  double loss = 0.0;
  for (double l : losses) loss += l;
  // Sum the shard gradients (fixed order) and update, split by parameter
  // range; chunks are multiples of 16 floats so SIMD tails do not move.
  const OptimizerStep os = MakeOptimizerStep(hp_, step);
  const size_t np = spec_.NumParams();
  const int parts = threads_;
  const size_t chunk = ((np + parts - 1) / parts + 15) / 16 * 16;
  Parallel(parts, [&](int t) {
    const size_t b = std::min(np, t * chunk), e = std::min(np, b + chunk);
    if (b >= e) return;
    float* g = grad_.data();
    for (int s = 1; s < shards; ++s) {
      const float* gs = ws_[s]->grad.data();
      for (size_t k = b; k < e; ++k) g[k] += gs[k];
    }
    if (hp_.optimizer == OptimizerKind::kAdam) {
      cpu::AdamStep(os, e - b, g + b, state_.params.data() + b,
                    state_.m.data() + b, state_.v.data() + b);
    } else {
      cpu::SgdStep(os, e - b, g + b, state_.params.data() + b,
                   state_.m.data() + b);
    }
  });
  return static_cast<float>(loss / n);
}

absl::Status CpuBackend::Forward(const float* x, int n, float* out) {
  if (n <= 0 || n > max_batch_) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch of ", n, " rows; backend allows 1..", max_batch_));
  }
  RunForward(*ws_[0], x, n, /*train=*/false, 0, 0);
  const int dout = spec_.OutputSize();
  std::memcpy(out, ws_[0]->z.back().data(), sizeof(float) * n * dout);
  if (spec_.task == Task::kClassification) cpu::Softmax(n, dout, out);
  return absl::OkStatus();
}

}  // namespace cairn::trainer
