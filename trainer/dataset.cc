// Loading, splitting and normalizing the data of a run (see dataset.h).
#include "trainer/dataset.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "trainer/data.h"

namespace cairn::trainer {
namespace {

absl::StatusOr<float> Target(const std::string& label, size_t row, Task task,
                             const std::map<std::string, int>& index,
                             const std::string& path) {
  if (task == Task::kClassification) {
    auto it = index.find(label);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": data row ", row + 1, ": label '", label,
                       "' is not a class of the training data"));
    }
    return static_cast<float>(it->second);
  }
  double v;
  if (!absl::SimpleAtod(label, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": data row ", row + 1,
                                                   ": regression label '",
                                                   label, "' is not a number"));
  }
  return static_cast<float>(v);
}

absl::StatusOr<std::vector<float>> Targets(
    const std::vector<std::string>& labels, Task task,
    const std::vector<std::string>& classes, const std::string& path) {
  std::vector<float> y(labels.size());
  std::map<std::string, int> index;
  for (size_t c = 0; c < classes.size(); ++c)
    index[classes[c]] = static_cast<int>(c);
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StatusOr<float> t = Target(labels[i], i, task, index, path);
    if (!t.ok()) return t.status();
    y[i] = *t;
  }
  return y;
}

Split Gather(const std::vector<float>& x, const std::vector<float>& y,
             int features, const std::vector<uint32_t>& rows) {
  Split s;
  s.rows = rows.size();
  s.x.resize(rows.size() * features);
  s.y.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy_n(x.data() + static_cast<size_t>(rows[i]) * features, features,
                s.x.data() + i * features);
    s.y[i] = y[rows[i]];
  }
  return s;
}

// Reads the training file; fills everything of `d` but the splits.
absl::StatusOr<CsvData> ReadTraining(const TrainOptions& o, Dataset& d) {
  absl::StatusOr<CsvData> csv =
      ReadCsv(o.train_path, LabelFlagResolver(o.label));
  if (!csv.ok()) return csv.status();
  d.features = static_cast<int>(csv->feature_names.size());
  if (d.features == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.train_path, ": no feature columns besides the label"));
  }
  if (o.task == Task::kClassification) {
    d.classes = SortedClasses(csv->labels);
    if (d.classes.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.train_path, ": classification needs at least 2 classes, label '",
          csv->label_name, "' has ", d.classes.size()));
    }
  }
  d.feature_names = csv->feature_names;
  d.label_name = csv->label_name;
  d.label_column = csv->label_column;
  d.num_columns = csv->num_columns;
  return csv;
}

absl::Status SplitOffValidation(const TrainOptions& o, const CsvData& csv,
                                const std::vector<float>& y, Dataset& d) {
  if (csv.rows < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.train_path, ": needs at least 2 rows to split off validation"));
  }
  std::vector<uint32_t> tr, va;
  SplitRows(csv.rows, o.validation_fraction, o.hp.seed, &tr, &va);
  d.train = Gather(csv.features, y, d.features, tr);
  d.val = Gather(csv.features, y, d.features, va);
  return absl::OkStatus();
}

// The validation file's label column: the training label's name when it has
// a header naming it, else the training file's label column.
LabelResolver ValidationLabel(const Dataset& d) {
  return [&d](const std::vector<std::string>& header,
              int cols) -> absl::StatusOr<int> {
    if (!header.empty()) {
      for (int c = 0; c < cols; ++c) {
        if (header[c] == d.label_name) return c;
      }
    }
    if (cols != d.features + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "has ", cols, " columns, the training file has ", d.features + 1));
    }
    return d.label_column;
  };
}

absl::Status ReadValidation(const TrainOptions& o, Dataset& d) {
  absl::StatusOr<CsvData> csv = ReadCsv(o.validation_path, ValidationLabel(d));
  if (!csv.ok()) return csv.status();
  if (static_cast<int>(csv->feature_names.size()) != d.features) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.validation_path, ": has ", csv->feature_names.size(),
                     " feature columns, the training file has ", d.features));
  }
  absl::StatusOr<std::vector<float>> y =
      Targets(csv->labels, o.task, d.classes, o.validation_path);
  if (!y.ok()) return y.status();
  d.val.rows = csv->rows;
  d.val.x = std::move(csv->features);
  d.val.y = std::move(*y);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Dataset> LoadDataset(const TrainOptions& o) {
  Dataset d;
  absl::StatusOr<CsvData> train = ReadTraining(o, d);
  if (!train.ok()) return train.status();
  absl::StatusOr<std::vector<float>> y =
      Targets(train->labels, o.task, d.classes, o.train_path);
  if (!y.ok()) return y.status();
  if (o.validation_path.empty()) {
    absl::Status s = SplitOffValidation(o, *train, *y, d);
    if (!s.ok()) return s;
  } else {
    d.train.rows = train->rows;
    d.train.x = std::move(train->features);
    d.train.y = std::move(*y);
    absl::Status s = ReadValidation(o, d);
    if (!s.ok()) return s;
  }
  ComputeNormalization(d.train.x, d.train.rows, d.features, &d.mean, &d.stdev);
  Normalize(d.mean, d.stdev, d.train.rows, &d.train.x);
  Normalize(d.mean, d.stdev, d.val.rows, &d.val.x);
  return d;
}

}  // namespace cairn::trainer
