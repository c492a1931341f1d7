// The compute backend interface of cairn-train: one training step and
// inference of the MLP on a batch. Implementations: the Eigen float32 CPU
// backend (cpu_backend.h) and the CUDA backend (cuda_backend.h, loaded at run
// time from a shared module: cuda_loader.h).
#ifndef CAIRN_TRAINER_BACKEND_H_
#define CAIRN_TRAINER_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model.h"

namespace cairn::trainer {

enum class BackendKind { kAuto, kCpu, kCuda };
absl::StatusOr<BackendKind> ParseBackendKind(const std::string& s);

// Optimizer state that a checkpoint saves: parameters and two moment arrays
// (Adam: m and v; SGD: velocity in m, v unused but kept zero), all of length
// spec.NumParams().
struct TrainState {
  std::vector<float> params;
  std::vector<float> m;
  std::vector<float> v;
};

// A Backend owns the parameters and optimizer state (on its device) and the
// scratch buffers of one batch size. Not thread-safe: one thread drives it.
class Backend {
 public:
  virtual ~Backend() = default;

  // Creates a backend. kAuto picks CUDA when a device is present, else CPU.
  // Only kCuda, or kAuto on a machine with NVIDIA device nodes, loads the
  // CUDA module; kCpu never maps the CUDA libraries.
  // `threads` is the CPU thread count (CPU backend; results are deterministic
  // for a fixed count). `max_batch` bounds n in TrainStep and Forward.
  static absl::StatusOr<std::unique_ptr<Backend>> Create(BackendKind kind,
                                                         const ModelSpec& spec,
                                                         const HyperParams& hp,
                                                         int threads,
                                                         int max_batch);

  virtual std::string Name() const = 0;

  // Replaces the parameters and optimizer state. Sizes must match the spec.
  virtual absl::Status SetState(const TrainState& state) = 0;
  // Copies the current parameters and optimizer state out.
  virtual absl::Status GetState(TrainState* state) = 0;

  // One step of forward, backward and optimizer update on x (row-major
  // [n, input]) and y (n class indices as floats, or n regression targets).
  // `step` is the 0-based global step: it selects the dropout masks and
  // Adam's bias correction. Returns the mean loss of the batch before the
  // update. REQUIRES: 0 < n <= max_batch.
  virtual absl::StatusOr<float> TrainStep(const float* x, const float* y, int n,
                                          uint64_t step) = 0;

  // Inference without dropout: writes class probabilities (classification)
  // or predicted values (regression), row-major [n, output], into out.
  virtual absl::Status Forward(const float* x, int n, float* out) = 0;
};

// Number of CUDA devices visible: 0 when the machine has no NVIDIA device
// nodes (checked without loading CUDA), when the CUDA module cannot be loaded,
// or when the driver finds no device. Otherwise loads the CUDA module (see
// cuda_loader.h).
int CudaDeviceCount();

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_BACKEND_H_
