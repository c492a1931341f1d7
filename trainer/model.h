// The MLP that cairn-train fits: its shape, its hyperparameters and the flat
// parameter layout shared by both backends, checkpoints and the exported model.
#ifndef CAIRN_TRAINER_MODEL_H_
#define CAIRN_TRAINER_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/device_math.h"

namespace cairn::trainer {

enum class Task { kClassification, kRegression };
enum class OptimizerKind { kSgd, kAdam };

absl::StatusOr<Task> ParseTask(const std::string& s);
absl::StatusOr<Activation> ParseActivation(const std::string& s);
absl::StatusOr<OptimizerKind> ParseOptimizer(const std::string& s);
const char* TaskName(Task t);
const char* ActivationName(Activation a);
const char* OptimizerName(OptimizerKind o);

// Shape of the network. Parameters live in one flat float array: for each
// layer l (0-based, NumLayers() of them) the weight matrix W_l, row-major
// [layer_sizes[l], layer_sizes[l+1]] (so Z = A W + b), followed by its bias.
struct ModelSpec {
  Task task = Task::kClassification;
  Activation activation = Activation::kRelu;
  // Input width, hidden widths..., output width (classes, or 1).
  std::vector<int> layer_sizes;

  int NumLayers() const { return static_cast<int>(layer_sizes.size()) - 1; }
  int InputSize() const { return layer_sizes.front(); }
  int OutputSize() const { return layer_sizes.back(); }
  size_t WeightOffset(int l) const;
  size_t BiasOffset(int l) const;
  size_t NumParams() const;
  // Checks that every width is positive and there are at least two sizes.
  absl::Status Validate() const;
};

// Training hyperparameters that the backends need.
struct HyperParams {
  OptimizerKind optimizer = OptimizerKind::kAdam;
  float learning_rate = 1e-3f;
  float momentum = 0.9f;      // SGD only.
  float weight_decay = 0.0f;  // Decoupled for Adam, L2 for SGD; all params.
  float dropout = 0.0f;       // Probability of dropping a hidden activation.
  uint64_t seed = 0;          // Dropout masks and initialization.
};

// Glorot-uniform weights drawn from the counter-based RNG, zero biases.
// Deterministic in (spec, seed). REQUIRES: params has spec.NumParams() slots.
void InitParams(const ModelSpec& spec, uint64_t seed, float* params);

// Optimizer scalars for global step `step` (0-based; Adam's t = step + 1).
OptimizerStep MakeOptimizerStep(const HyperParams& hp, uint64_t step);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_MODEL_H_
