// Model shape helpers, flag value parsing and deterministic initialization.
#include "trainer/model.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace cairn::trainer {

absl::StatusOr<Task> ParseTask(const std::string& s) {
  if (s == "classification") return Task::kClassification;
  if (s == "regression") return Task::kRegression;
  return absl::InvalidArgumentError(absl::StrCat(
      "--task: expected classification or regression, got '", s, "'"));
}

absl::StatusOr<Activation> ParseActivation(const std::string& s) {
  if (s == "relu") return Activation::kRelu;
  if (s == "tanh") return Activation::kTanh;
  if (s == "gelu") return Activation::kGelu;
  return absl::InvalidArgumentError(
      absl::StrCat("--activation: expected relu, tanh or gelu, got '", s, "'"));
}

absl::StatusOr<OptimizerKind> ParseOptimizer(const std::string& s) {
  if (s == "sgd") return OptimizerKind::kSgd;
  if (s == "adam") return OptimizerKind::kAdam;
  return absl::InvalidArgumentError(
      absl::StrCat("--optimizer: expected sgd or adam, got '", s, "'"));
}

const char* TaskName(Task t) {
  return t == Task::kClassification ? "classification" : "regression";
}

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kRelu:
      return "relu";
    case Activation::kTanh:
      return "tanh";
    case Activation::kGelu:
      return "gelu";
  }
  return "?";
}

const char* OptimizerName(OptimizerKind o) {
  return o == OptimizerKind::kSgd ? "sgd" : "adam";
}

size_t ModelSpec::WeightOffset(int l) const {
  size_t off = 0;
  for (int i = 0; i < l; ++i) {
    off += static_cast<size_t>(layer_sizes[i]) * layer_sizes[i + 1] +
           layer_sizes[i + 1];
  }
  return off;
}

size_t ModelSpec::BiasOffset(int l) const {
  return WeightOffset(l) +
         static_cast<size_t>(layer_sizes[l]) * layer_sizes[l + 1];
}

size_t ModelSpec::NumParams() const { return WeightOffset(NumLayers()); }

absl::Status ModelSpec::Validate() const {
  if (layer_sizes.size() < 2) {
    return absl::InvalidArgumentError(
        "model needs an input and an output size");
  }
  for (size_t i = 0; i < layer_sizes.size(); ++i) {
    if (layer_sizes[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layer ", i, " has non-positive width ", layer_sizes[i]));
    }
  }
  return absl::OkStatus();
}

void InitParams(const ModelSpec& spec, uint64_t seed, float* params) {
  for (int l = 0; l < spec.NumLayers(); ++l) {
    const int in = spec.layer_sizes[l], out = spec.layer_sizes[l + 1];
    const float limit = std::sqrt(6.0f / static_cast<float>(in + out));
    float* w = params + spec.WeightOffset(l);
    const size_t nw = static_cast<size_t>(in) * out;
    for (size_t i = 0; i < nw; ++i) {
      const float u = UniformFromBits(Philox(
          seed, kInitStep, static_cast<uint32_t>(l), static_cast<uint32_t>(i)));
      w[i] = (2.0f * u - 1.0f) * limit;
    }
    float* b = params + spec.BiasOffset(l);
    for (int j = 0; j < out; ++j) b[j] = 0.0f;
  }
}

OptimizerStep MakeOptimizerStep(const HyperParams& hp, uint64_t step) {
  OptimizerStep s;
  s.lr = hp.learning_rate;
  s.weight_decay = hp.weight_decay;
  s.momentum = hp.momentum;
  const double t = static_cast<double>(step) + 1.0;
  s.inv_bias1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
  s.inv_bias2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
  return s;
}

}  // namespace cairn::trainer
