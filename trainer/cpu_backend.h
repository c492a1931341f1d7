// The Eigen float32 CPU backend of cairn-train. A training step splits the
// batch into one contiguous shard per thread; each thread runs forward and
// backward of its rows with single-threaded Eigen GEMMs on row-major Maps of
// preallocated buffers (no temporaries), then the shard gradients are summed
// in a fixed order and the optimizer update runs split by parameter range.
// Two synchronizations per step, and for a fixed thread count every result
// is bit-for-bit reproducible, which the resume guarantee relies on. Dropout
// masks are indexed by the row's position in the whole batch, so they do not
// depend on the thread count.
#ifndef CAIRN_TRAINER_CPU_BACKEND_H_
#define CAIRN_TRAINER_CPU_BACKEND_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend.h"

namespace cairn::trainer {

// Not thread-safe (one caller drives it); owns threads - 1 worker threads.
class CpuBackend final : public Backend {
 public:
  CpuBackend(const ModelSpec& spec, const HyperParams& hp, int threads,
             int max_batch);
  ~CpuBackend() override;

  std::string Name() const override { return "cpu"; }
  absl::Status SetState(const TrainState& state) override;
  absl::Status GetState(TrainState* state) override;
  absl::StatusOr<float> TrainStep(const float* x, const float* y, int n,
                                  uint64_t step) override;
  absl::Status Forward(const float* x, int n, float* out) override;

  // Forward and backward without the update: writes the gradient of the mean
  // batch loss (spec.NumParams() floats) into grad and returns the mean loss.
  // Dropout uses the masks of `step`. REQUIRES: 0 < n <= max_batch.
  float ComputeGradients(const float* x, const float* y, int n, uint64_t step,
                         float* grad);

 private:
  class Pool;
  struct Workspace;

  // Number of shards a batch of n rows is split into (depends only on n and
  // the thread count) and the first row of shard s (s = shards: n).
  int Shards(int n) const;
  int ShardBegin(int n, int shards, int s) const;
  // Forward (+ backward when grad != nullptr) of rows [row0, row0 + rows) of
  // a batch of `total` rows; returns the summed loss of those rows.
  double RunShard(Workspace& ws, const float* x, const float* y, int row0,
                  int rows, int total, uint64_t step, float* grad);
  void RunForward(Workspace& ws, const float* x, int n, bool train,
                  uint64_t step, int row0);
  // Runs fn(s) for s in [0, count) on the caller and the workers; returns
  // when all are done.
  void Parallel(int count, const std::function<void(int)>& fn);

  const ModelSpec spec_;
  const HyperParams hp_;
  const int threads_;
  const int max_batch_;
  TrainState state_;
  std::vector<float> grad_;
  std::vector<std::unique_ptr<Workspace>> ws_;  // One per thread.
  std::unique_ptr<Pool> pool_;
};

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_CPU_BACKEND_H_
