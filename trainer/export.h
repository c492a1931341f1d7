// The exported model of cairn-train (--job-dir/model/): weights.bin (header
// with magic, count and CRC32, then the flat float32 parameters) and
// model.json (architecture, activation, task, feature names, label column
// and classes, input normalization). Also batch prediction from a CSV.
// The functions are thread-compatible: concurrent calls on different
// directories and files are safe.
#ifndef CAIRN_TRAINER_EXPORT_H_
#define CAIRN_TRAINER_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model.h"

namespace cairn::trainer {

struct ExportedModel {
  ModelSpec spec;
  std::vector<std::string> feature_names;
  std::string label_name;
  int label_column = -1;             // Column of the label in the training CSV.
  int num_columns = 0;               // Columns of the training CSV.
  std::vector<std::string> classes;  // Classification only; output order.
  std::vector<float> mean, std;      // Input normalization.
  std::vector<float> params;         // spec.NumParams() floats.
};

// Writes dir/weights.bin and dir/model.json atomically (creates dir).
absl::Status ExportModel(const std::string& dir, const ExportedModel& model);

// Reads and validates a model directory (checksum, sizes, JSON fields).
absl::StatusOr<ExportedModel> LoadModel(const std::string& dir);

// Predictions for every row of the CSV `input`: the class label
// (classification) or the value (regression), one per line, written to
// `output` or to stdout when it is empty. The input may hold the label
// column (it is ignored) and may have a header, whose names then select the
// features. Returns the number of rows predicted.
absl::StatusOr<size_t> PredictCsv(const std::string& model_dir,
                                  const std::string& input,
                                  const std::string& output);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_EXPORT_H_
