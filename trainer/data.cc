// CSV reading and dataset preparation (see data.h).
#include "trainer/data.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cairn::trainer {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<gzFile_s, GzCloser>;

// Reads one line (without the newline / CR). Returns false at end of file.
bool ReadLine(gzFile f, std::string* line) {
  line->clear();
  char buf[65536];
  bool any = false;
  while (gzgets(f, buf, sizeof(buf)) != nullptr) {
    any = true;
    line->append(buf);
    if (!line->empty() && line->back() == '\n') break;
  }
  if (!any) return false;
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) {
    line->pop_back();
  }
  return true;
}

std::vector<std::string> SplitCells(const std::string& line) {
  std::vector<std::string> cells = absl::StrSplit(line, ',');
  for (std::string& c : cells) {
    absl::StripAsciiWhitespace(&c);
    if (c.size() >= 2 && c.front() == '"' && c.back() == '"') {
      c = c.substr(1, c.size() - 2);
    }
  }
  return cells;
}

bool ParseFloat(const std::string& s, float* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool IsNumber(const std::string& s) {
  float v;
  return ParseFloat(s, &v);
}

std::string ColumnName(const std::vector<std::string>& header, int col) {
  if (!header.empty()) return header[col];
  return absl::StrCat("f", col);
}

// The non-blank lines of a CSV file split into cells, read lazily, with
// their 1-based line numbers.
class CsvLines {
 public:
  explicit CsvLines(gzFile f) : f_(f) {}

  // Reads the next non-blank line into *cells; false at end of file.
  bool Next(std::vector<std::string>* cells) {
    while (ReadLine(f_, &line_)) {
      ++line_no_;
      if (absl::StripAsciiWhitespace(line_).empty()) continue;
      *cells = SplitCells(line_);
      return true;
    }
    return false;
  }

  // Line number of the line Next returned last.
  int line_no() const { return line_no_; }

 private:
  gzFile f_;
  std::string line_;
  int line_no_ = 0;
};

// Whether the first non-blank line is a header: with a second line, some
// column is non-numeric in the first and numeric in the second; alone, any
// of its cells is non-numeric.
bool LooksLikeHeader(const std::vector<std::string>& first, bool has_second,
                     const std::vector<std::string>& second) {
  if (!has_second) {
    return std::any_of(first.begin(), first.end(),
                       [](const std::string& c) { return !IsNumber(c); });
  }
  bool header = false;
  const size_t m = std::min(first.size(), second.size());
  for (size_t c = 0; c < m; ++c) {
    if (!IsNumber(first[c]) && IsNumber(second[c])) header = true;
  }
  return header;
}

// Sets data->label_column (by `resolver`), label_name and feature_names.
// REQUIRES: data->num_columns and data->header are set.
absl::Status ResolveColumns(const std::string& path,
                            const LabelResolver& resolver, CsvData* data) {
  absl::StatusOr<int> label = resolver(data->header, data->num_columns);
  if (!label.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", label.status().message()));
  }
  data->label_column = *label;
  for (int c = 0; c < data->num_columns; ++c) {
    if (c == data->label_column) {
      data->label_name = ColumnName(data->header, c);
    } else {
      data->feature_names.push_back(ColumnName(data->header, c));
    }
  }
  return absl::OkStatus();
}

// Appends one data row (its label and features) to *data, or says why the
// row at line `at_line` is malformed. `first_line` is where the column count
// was set.
absl::Status AddRow(const std::string& path, int first_line,
                    const std::vector<std::string>& cells, int at_line,
                    CsvData* data) {
  if (static_cast<int>(cells.size()) != data->num_columns) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", at_line, ": expected ", data->num_columns,
        " columns (as on line ", first_line, "), found ", cells.size()));
  }
  for (int c = 0; c < data->num_columns; ++c) {
    if (c == data->label_column) {
      if (cells[c].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", at_line, ": column ", c + 1, " ('",
                         ColumnName(data->header, c), "'): empty label"));
      }
      data->labels.push_back(cells[c]);
      continue;
    }
    float v;
    if (!ParseFloat(cells[c], &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", at_line, ": column ", c + 1, " ('",
                       ColumnName(data->header, c), "'): non-numeric value '",
                       cells[c], "'"));
    }
    data->features.push_back(v);
  }
  ++data->rows;
  return absl::OkStatus();
}

// The end of ReadCsv: fails on a read error of `f` or when no data row was
// read, else returns `data`.
absl::StatusOr<CsvData> FinishCsv(const std::string& path, gzFile f,
                                  CsvData data) {
  int err = 0;
  const char* msg = gzerror(f, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat(path, ": read error: ", msg));
  }
  if (data.rows == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no data rows (only a header)"));
  }
  return data;
}

}  // namespace

LabelResolver LabelFlagResolver(const std::string& label) {
  return [label](const std::vector<std::string>& header,
                 int num_columns) -> absl::StatusOr<int> {
    if (label.empty()) return num_columns - 1;
    for (int c = 0; c < static_cast<int>(header.size()); ++c) {
      if (header[c] == label) return c;
    }
    int index;
    if (absl::SimpleAtoi(label, &index)) {
      const int col = index < 0 ? num_columns + index : index;
      if (col < 0 || col >= num_columns) {
        return absl::InvalidArgumentError(
            absl::StrCat("--label=", label, " is out of range for ",
                         num_columns, " columns"));
      }
      return col;
    }
    if (header.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--label=", label,
          " names a column, but the file has no header row (use a 0-based "
          "column index)"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "label column '", label,
        "' not found in header (columns: ", absl::StrJoin(header, ", "), ")"));
  };
}

absl::StatusOr<CsvData> ReadCsv(const std::string& path,
                                const LabelResolver& resolver) {
  GzPtr f(gzopen(path.c_str(), "rb"));
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  gzbuffer(f.get(), 1 << 17);
  CsvLines lines(f.get());
  std::vector<std::string> first, second;
  if (!lines.Next(&first)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  }
  const int first_line = lines.line_no();
  const bool has_second = lines.Next(&second);
  const int second_line = lines.line_no();

  CsvData data;
  data.num_columns = static_cast<int>(first.size());
  const bool header = LooksLikeHeader(first, has_second, second);
  if (header) data.header = first;
  if (absl::Status s = ResolveColumns(path, resolver, &data); !s.ok()) {
    return s;
  }
  if (!header) {
    absl::Status s = AddRow(path, first_line, first, first_line, &data);
    if (!s.ok()) return s;
  }
  if (has_second) {
    absl::Status s = AddRow(path, first_line, second, second_line, &data);
    if (!s.ok()) return s;
    std::vector<std::string> cells;
    while (lines.Next(&cells)) {
      s = AddRow(path, first_line, cells, lines.line_no(), &data);
      if (!s.ok()) return s;
    }
  }
  return FinishCsv(path, f.get(), std::move(data));
}

std::vector<std::string> SortedClasses(const std::vector<std::string>& labels) {
  std::vector<std::string> classes = labels;
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  bool numeric = true;
  std::vector<std::pair<double, std::string>> keyed;
  for (const std::string& c : classes) {
    double v;
    if (!absl::SimpleAtod(c, &v)) {
      numeric = false;
      break;
    }
    keyed.emplace_back(v, c);
  }
  if (numeric) {
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 0; i < keyed.size(); ++i) classes[i] = keyed[i].second;
  }
  return classes;
}

std::vector<uint32_t> SeededPermutation(size_t n, uint64_t seed) {
  std::vector<uint32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i);
  uint64_t state = seed;
  auto next = [&state]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (size_t i = n; i > 1; --i) {
    // Multiply-shift maps 64 random bits onto [0, i) without division bias
    // that matters here; deterministic on every platform.
    const uint64_t j = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(next()) * i) >> 64);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

std::vector<uint32_t> EpochOrder(size_t n, uint64_t seed, uint64_t epoch) {
  return SeededPermutation(n, seed * 0x9E3779B97F4A7C15ull + epoch + 1);
}

void SplitRows(size_t n, double fraction, uint64_t seed,
               std::vector<uint32_t>* train,
               std::vector<uint32_t>* validation) {
  std::vector<uint32_t> p = SeededPermutation(n, seed ^ 0x5EEDF00Dull);
  size_t nval = static_cast<size_t>(std::llround(fraction * n));
  nval = std::clamp<size_t>(nval, 1, n - 1);
  validation->assign(p.end() - nval, p.end());
  train->assign(p.begin(), p.end() - nval);
  std::sort(train->begin(), train->end());
  std::sort(validation->begin(), validation->end());
}

void ComputeNormalization(const std::vector<float>& x, size_t rows, int cols,
                          std::vector<float>* mean, std::vector<float>* std) {
  std::vector<double> s(cols, 0.0), s2(cols, 0.0);
  for (size_t i = 0; i < rows; ++i) {
    const float* r = x.data() + i * cols;
    for (int j = 0; j < cols; ++j) s[j] += r[j];
  }
  for (int j = 0; j < cols; ++j) s[j] /= std::max<size_t>(rows, 1);
  for (size_t i = 0; i < rows; ++i) {
    const float* r = x.data() + i * cols;
    for (int j = 0; j < cols; ++j) {
      const double d = r[j] - s[j];
      s2[j] += d * d;
    }
  }
  mean->resize(cols);
  std->resize(cols);
  for (int j = 0; j < cols; ++j) {
    const double sd = std::sqrt(s2[j] / std::max<size_t>(rows, 1));
    (*mean)[j] = static_cast<float>(s[j]);
    (*std)[j] = sd > 1e-8 ? static_cast<float>(sd) : 1.0f;
  }
}

void Normalize(const std::vector<float>& mean, const std::vector<float>& std,
               size_t rows, std::vector<float>* x) {
  const size_t cols = mean.size();
  for (size_t i = 0; i < rows; ++i) {
    float* r = x->data() + i * cols;
    for (size_t j = 0; j < cols; ++j) r[j] = (r[j] - mean[j]) / std[j];
  }
}

}  // namespace cairn::trainer
