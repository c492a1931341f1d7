// Checkpoints of cairn-train: the whole training state in one binary file
// (header with magic, version, payload length and CRC32), written atomically
// (temporary file, fsync, rename, fsync of the directory) into the job
// directory, the newest K kept. Loading skips torn or corrupt files.
#ifndef CAIRN_TRAINER_CHECKPOINT_H_
#define CAIRN_TRAINER_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/backend.h"

namespace cairn::trainer {

// Everything a run needs to continue exactly where it stopped.
struct Checkpoint {
  // Canonical text of the arguments the training state depends on; a
  // checkpoint is only resumed by a run with the same fingerprint.
  std::string fingerprint;
  uint64_t step = 0;      // Optimizer steps done (the next step's index).
  uint64_t epoch = 0;     // Current epoch, 0-based; == epochs once finished.
  uint64_t position = 0;  // Rows of `order` already consumed this epoch.
  std::vector<uint32_t> order;  // Training row order of the current epoch.
  double epoch_loss_sum = 0.0;  // Sum of batch losses this epoch.
  uint64_t epoch_batches = 0;
  double last_train_loss = 0.0;  // Mean batch loss of the last full epoch.
  double elapsed_seconds = 0.0;  // Training time accumulated over attempts.
  TrainState state;
};

// Binary encoding (little-endian host assumed) and its inverse. Decode
// returns DataLoss for a bad magic, version, length or checksum.
std::string EncodeCheckpoint(const Checkpoint& ckpt);
absl::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view bytes);

// Writes `bytes` to `path` so that a crash leaves either the old file or the
// new one: temp file in the same directory, fsync, rename, fsync directory.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// mkdir -p.
absl::Status MakeDirs(const std::string& dir);

// Manages the checkpoints of one job directory. Not thread-safe.
class CheckpointManager {
 public:
  // `dir` is created if missing (by Save). Keeps the newest `keep` (>= 1).
  CheckpointManager(std::string dir, int keep);

  // Writes ckpt as ckpt-<step>.bin atomically, then deletes all but the
  // newest `keep` checkpoints and stale temporary files.
  absl::Status Save(const Checkpoint& ckpt);

  // The newest checkpoint that decodes. Files that fail are skipped and
  // described in *skipped (may be null). NotFound when none is valid.
  absl::StatusOr<Checkpoint> LoadLatest(std::vector<std::string>* skipped);

  // Checkpoint paths, oldest first.
  std::vector<std::string> List() const;

 private:
  const std::string dir_;
  const int keep_;
};

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_CHECKPOINT_H_
