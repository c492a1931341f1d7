// Tabular data for cairn-train: CSV reading (plain or gzip, with or without a
// header), label extraction, the seeded train/validation split, input
// normalization and the seeded per-epoch order. Functions are thread-safe.
#ifndef CAIRN_TRAINER_DATA_H_
#define CAIRN_TRAINER_DATA_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn::trainer {

// A CSV file split into a numeric feature matrix and a label column.
struct CsvData {
  std::vector<std::string> header;  // Column names; empty when none.
  int num_columns = 0;
  int label_column = -1;                   // -1: no label column.
  std::vector<std::string> feature_names;  // Header names, else "f<col>".
  std::string label_name;                  // Header name, else "f<col>".
  size_t rows = 0;
  std::vector<float> features;      // Row-major [rows, feature_names.size()].
  std::vector<std::string> labels;  // Label cell text per row.
};

// Picks the label column given the header (empty when the file has none) and
// the column count; returns -1 for "no label column" or an error.
using LabelResolver = std::function<absl::StatusOr<int>(
    const std::vector<std::string>& header, int num_columns)>;

// Resolver for the --label flag: "" means the last column; an integer is a
// 0-based index (negative counts from the end, -1 = last) unless the header
// has a column of that name; anything else is a column name.
LabelResolver LabelFlagResolver(const std::string& label);

// Reads `path` (gzip detected by content). The first line is a header when
// some column holds a non-number there and a number on the next line. Blank
// lines are skipped. Cells are trimmed; surrounding double quotes are
// removed. Every non-label cell must be a finite number. Errors
// (InvalidArgument, or NotFound for a missing file) name the file, line and
// column: empty file, no data rows, ragged row, non-numeric cell, label
// column missing.
absl::StatusOr<CsvData> ReadCsv(const std::string& path,
                                const LabelResolver& resolver);

// Classification classes: the distinct labels, sorted numerically when all
// parse as numbers, else lexicographically.
std::vector<std::string> SortedClasses(const std::vector<std::string>& labels);

// Deterministic Fisher-Yates permutation of [0, n) from a 64-bit seed
// (SplitMix64 stream; independent of the standard library).
std::vector<uint32_t> SeededPermutation(size_t n, uint64_t seed);

// Order of the training rows in epoch `epoch` for run seed `seed`.
std::vector<uint32_t> EpochOrder(size_t n, uint64_t seed, uint64_t epoch);

// Splits [0, n) into train and validation row indices: a seeded shuffle, the
// last round(fraction * n) rows (at least 1, at most n - 1) validate. Both
// lists come back sorted. REQUIRES: n >= 2, 0 < fraction < 1.
void SplitRows(size_t n, double fraction, uint64_t seed,
               std::vector<uint32_t>* train, std::vector<uint32_t>* validation);

// Per-column mean and standard deviation of the row-major [rows, cols] x
// (std 1 for constant columns), computed in double.
void ComputeNormalization(const std::vector<float>& x, size_t rows, int cols,
                          std::vector<float>* mean, std::vector<float>* std);

// x[i, j] = (x[i, j] - mean[j]) / std[j] in place.
void Normalize(const std::vector<float>& mean, const std::vector<float>& std,
               size_t rows, std::vector<float>* x);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_DATA_H_
