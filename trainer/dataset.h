// The data of one cairn-train run: the training CSV read, split (or paired
// with the validation CSV), targets parsed and features normalized by the
// statistics of the training split.
#ifndef CAIRN_TRAINER_DATASET_H_
#define CAIRN_TRAINER_DATASET_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/trainer.h"

namespace cairn::trainer {

// Features and targets of one split, normalized, ready for the backend.
struct Split {
  size_t rows = 0;
  std::vector<float> x;  // [rows, features]
  std::vector<float> y;  // Class index or target per row.
};

struct Dataset {
  int features = 0;                        // Feature columns (> 0).
  std::vector<std::string> feature_names;  // Of the training file.
  std::string label_name;
  int label_column = -1;
  int num_columns = 0;
  std::vector<std::string> classes;  // Sorted; empty for regression.
  std::vector<float> mean, stdev;    // Per feature, of the training split.
  Split train;
  Split val;
};

// Reads options.train_path (and options.validation_path, or splits off
// options.validation_fraction of the training rows with options.hp.seed).
// InvalidArgument naming the file and row for bad data.
absl::StatusOr<Dataset> LoadDataset(const TrainOptions& options);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_DATASET_H_
