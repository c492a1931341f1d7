// The cairn-train training run: load and split the data, train with
// checkpoints and per-epoch reports, export the model, print final metrics.
#ifndef CAIRN_TRAINER_TRAINER_H_
#define CAIRN_TRAINER_TRAINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/backend.h"
#include "trainer/model.h"

namespace cairn::trainer {

// Process exit codes of cairn-train.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;  // Bad input, I/O or device failure.
constexpr int kExitUsage = 2;  // Bad command line.
// Stopped by SIGTERM/SIGINT after writing a checkpoint (128 + SIGTERM):
// the job was preempted or stopped early, not completed.
constexpr int kExitPreempted = 143;

struct TrainOptions {
  std::string train_path;       // --train (required).
  std::string validation_path;  // --validation; empty: split --train.
  double validation_fraction = 0.2;
  std::string label;  // --label: name or 0-based index; empty: last column.
  Task task = Task::kClassification;
  std::vector<int> hidden_units = {128};
  Activation activation = Activation::kRelu;
  HyperParams hp;  // learning_rate, momentum, weight_decay, dropout, seed.
  int batch_size = 64;
  int epochs = 10;
  std::string job_dir;  // Checkpoints and model/; empty: neither.
  BackendKind backend = BackendKind::kAuto;
  int64_t checkpoint_every = 0;    // Steps between checkpoints; 0: off.
  double checkpoint_seconds = 60;  // Seconds between checkpoints; 0: off.
  int keep_checkpoints = 3;
  std::string hypertune_metric;  // Empty: val_accuracy / val_loss by task.
  int threads = 0;               // CPU threads; 0: min(hardware threads, 4).
};

// Checks ranges of every option. InvalidArgument naming the flag and value.
absl::Status ValidateOptions(const TrainOptions& options);

// Makes SIGTERM and SIGINT request a checkpoint-and-stop at the next step.
void InstallStopSignalHandlers();

// Runs training; call from one thread at a time (the stop flag set by the
// signal handlers is process-wide). Returns kExitOk when training completed,
// kExitPreempted when stopped by a signal (after checkpointing), or an error.
// Per-epoch lines and the final one-line JSON object go to stdout, logs to
// stderr.
absl::StatusOr<int> RunTraining(const TrainOptions& options);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_TRAINER_H_
