// Model export, loading and batch prediction (see export.h).
#include "trainer/export.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "trainer/checkpoint.h"
#include "trainer/cpu_backend.h"
#include "trainer/data.h"
#include "trainer/reporter.h"

namespace cairn::trainer {
namespace {

constexpr char kWeightsMagic[8] = {'C', 'A', 'I', 'R', 'N', 'W', 'T', '1'};
constexpr int kFormatVersion = 1;

std::string EncodeWeights(const std::vector<float>& params) {
  std::string out(kWeightsMagic, sizeof(kWeightsMagic));
  const uint64_t n = params.size();
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(params.data()),
            static_cast<uInt>(n * sizeof(float))));
  out.append(reinterpret_cast<const char*>(&n), sizeof(n));
  out.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  out.append(reinterpret_cast<const char*>(params.data()), n * sizeof(float));
  return out;
}

absl::StatusOr<std::vector<float>> DecodeWeights(const std::string& bytes,
                                                 const std::string& path) {
  constexpr size_t kHeader = 8 + 8 + 4;
  if (bytes.size() < kHeader ||
      std::memcmp(bytes.data(), kWeightsMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": not a weights file"));
  }
  uint64_t n;
  uint32_t crc;
  std::memcpy(&n, bytes.data() + 8, 8);
  std::memcpy(&crc, bytes.data() + 16, 4);
  if (bytes.size() - kHeader != n * sizeof(float)) {
    return absl::DataLossError(absl::StrCat(path, ": truncated"));
  }
  std::vector<float> params(n);
  std::memcpy(params.data(), bytes.data() + kHeader, n * sizeof(float));
  const uint32_t actual = static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(params.data()),
            static_cast<uInt>(n * sizeof(float))));
  if (actual != crc) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch"));
  }
  return params;
}

}  // namespace

absl::Status ExportModel(const std::string& dir, const ExportedModel& m) {
  if (m.params.size() != m.spec.NumParams()) {
    return absl::InvalidArgumentError(
        "parameter count does not match the spec");
  }
  absl::Status s = MakeDirs(dir);
  if (!s.ok()) return s;
  s = WriteFileAtomically(dir + "/weights.bin", EncodeWeights(m.params));
  if (!s.ok()) return s;
  nlohmann::ordered_json j;
  j["format_version"] = kFormatVersion;
  j["task"] = TaskName(m.spec.task);
  j["layer_sizes"] = m.spec.layer_sizes;
  j["activation"] = ActivationName(m.spec.activation);
  j["weights_file"] = "weights.bin";
  j["weights_layout"] =
      "float32 little-endian; per layer: W row-major [in, out] then b [out]";
  j["num_parameters"] = m.params.size();
  j["feature_names"] = m.feature_names;
  j["label_name"] = m.label_name;
  j["label_column"] = m.label_column;
  j["num_columns"] = m.num_columns;
  j["label_classes"] = m.classes;
  j["normalization"] = {{"mean", m.mean}, {"std", m.std}};
  return WriteFileAtomically(dir + "/model.json", j.dump(2) + "\n");
}

absl::StatusOr<ExportedModel> LoadModel(const std::string& dir) {
  const std::string json_path = dir + "/model.json";
  absl::StatusOr<std::string> text = ReadFile(json_path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": not valid JSON"));
  }
  ExportedModel m;
  try {
    if (j.at("format_version").get<int>() != kFormatVersion) {
      return absl::InvalidArgumentError(
          absl::StrCat(json_path, ": unsupported format_version"));
    }
    absl::StatusOr<Task> task = ParseTask(j.at("task").get<std::string>());
    absl::StatusOr<Activation> act =
        ParseActivation(j.at("activation").get<std::string>());
    if (!task.ok()) return task.status();
    if (!act.ok()) return act.status();
    m.spec.task = *task;
    m.spec.activation = *act;
    m.spec.layer_sizes = j.at("layer_sizes").get<std::vector<int>>();
    m.feature_names = j.at("feature_names").get<std::vector<std::string>>();
    m.label_name = j.at("label_name").get<std::string>();
    m.label_column = j.at("label_column").get<int>();
    m.num_columns = j.at("num_columns").get<int>();
    m.classes = j.at("label_classes").get<std::vector<std::string>>();
    m.mean = j.at("normalization").at("mean").get<std::vector<float>>();
    m.std = j.at("normalization").at("std").get<std::vector<float>>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": missing or mistyped field: ", e.what()));
  }
  absl::Status valid = m.spec.Validate();
  if (!valid.ok()) return valid;
  const size_t nf = m.spec.InputSize();
  if (m.feature_names.size() != nf || m.mean.size() != nf ||
      m.std.size() != nf) {
    return absl::InvalidArgumentError(absl::StrCat(
        json_path, ": feature_names/normalization do not match input size ",
        nf));
  }
  if (m.spec.task == Task::kClassification &&
      m.classes.size() != static_cast<size_t>(m.spec.OutputSize())) {
    return absl::InvalidArgumentError(
        absl::StrCat(json_path, ": label_classes do not match output size"));
  }
  const std::string wpath = dir + "/weights.bin";
  absl::StatusOr<std::string> bytes = ReadFile(wpath);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::vector<float>> params = DecodeWeights(*bytes, wpath);
  if (!params.ok()) return params.status();
  if (params->size() != m.spec.NumParams()) {
    return absl::InvalidArgumentError(
        absl::StrCat(wpath, ": ", params->size(),
                     " parameters, architecture needs ", m.spec.NumParams()));
  }
  m.params = std::move(*params);
  return m;
}

namespace {

// Rows predicted by one forward pass.
constexpr int kPredictChunk = 1024;

// Finds the label column of a prediction CSV, if it has one: the column
// named like the model's label (unless a feature has that name), else
// none when there are exactly the model's features, else the training
// file's label column when there is one column more.
LabelResolver ModelLabelResolver(const ExportedModel& m) {
  const int nf = m.spec.InputSize();
  return [&m, nf](const std::vector<std::string>& header,
                  int cols) -> absl::StatusOr<int> {
    for (int c = 0; c < static_cast<int>(header.size()); ++c) {
      if (header[c] == m.label_name &&
          std::find(m.feature_names.begin(), m.feature_names.end(),
                    m.label_name) == m.feature_names.end()) {
        return c;
      }
    }
    if (cols == nf) return -1;
    if (cols == nf + 1 && m.label_column >= 0 && m.label_column < cols) {
      return m.label_column;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", nf, " feature columns (or ", nf + 1,
                     " with the label), found ", cols));
  };
}

// The model's inputs, row-major [rows, features], normalized as in
// training. Features are selected by header name when every model feature
// is named there, else taken in order (then their count must match).
absl::StatusOr<std::vector<float>> ModelInputs(const ExportedModel& m,
                                               const CsvData& data,
                                               const std::string& input) {
  const int nf = m.spec.InputSize();
  std::vector<float> x(data.rows * nf);
  std::vector<int> cols(nf);
  bool by_name = !data.header.empty();
  for (int f = 0; f < nf && by_name; ++f) {
    auto it = std::find(data.feature_names.begin(), data.feature_names.end(),
                        m.feature_names[f]);
    if (it == data.feature_names.end()) {
      by_name = false;
    } else {
      cols[f] = static_cast<int>(it - data.feature_names.begin());
    }
  }
  const int have = static_cast<int>(data.feature_names.size());
  if (!by_name && have != nf) {
    return absl::InvalidArgumentError(absl::StrCat(
        input, ": has ", have, " feature columns, model expects ", nf));
  }
  for (size_t i = 0; i < data.rows; ++i) {
    for (int f = 0; f < nf; ++f) {
      const int c = by_name ? cols[f] : f;
      x[i * nf + f] = data.features[i * have + c];
    }
  }
  Normalize(m.mean, m.std, data.rows, &x);
  return x;
}

// Writes one prediction a line to `output` (stdout when empty): the class
// name for classification, the shortest round-trip number for regression.
absl::Status WritePredictions(const ExportedModel& m, CpuBackend& backend,
                              const std::vector<float>& x, size_t rows,
                              const std::string& output) {
  FILE* out = stdout;
  if (!output.empty()) {
    out = std::fopen(output.c_str(), "w");
    if (out == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--output: cannot open ", output, ": ", std::strerror(errno)));
    }
  }
  const int nf = m.spec.InputSize();
  const int nout = m.spec.OutputSize();
  std::vector<float> y(static_cast<size_t>(kPredictChunk) * nout);
  absl::Status s;
  for (size_t start = 0; start < rows && s.ok(); start += kPredictChunk) {
    const int n =
        static_cast<int>(std::min<size_t>(kPredictChunk, rows - start));
    s = backend.Forward(x.data() + start * nf, n, y.data());
    for (int i = 0; i < n && s.ok(); ++i) {
      const float* r = y.data() + static_cast<size_t>(i) * nout;
      if (m.spec.task == Task::kClassification) {
        const int best = static_cast<int>(std::max_element(r, r + nout) - r);
        std::fprintf(out, "%s\n", m.classes[best].c_str());
      } else {
        char buf[32];
        auto res = std::to_chars(buf, buf + sizeof(buf), r[0]);
        std::fprintf(out, "%.*s\n", static_cast<int>(res.ptr - buf), buf);
      }
    }
  }
  if (out != stdout) {
    if (std::fclose(out) != 0 && s.ok()) {
      s = absl::InternalError(absl::StrCat("writing ", output, " failed"));
    }
  } else {
    std::fflush(out);
  }
  return s;
}

}  // namespace

absl::StatusOr<size_t> PredictCsv(const std::string& model_dir,
                                  const std::string& input,
                                  const std::string& output) {
  absl::StatusOr<ExportedModel> model = LoadModel(model_dir);
  if (!model.ok()) return model.status();
  const ExportedModel& m = *model;
  absl::StatusOr<CsvData> data = ReadCsv(input, ModelLabelResolver(m));
  if (!data.ok()) return data.status();
  absl::StatusOr<std::vector<float>> x = ModelInputs(m, *data, input);
  if (!x.ok()) return x.status();

  HyperParams hp;
  CpuBackend backend(m.spec, hp, /*threads=*/1, kPredictChunk);
  TrainState state;
  state.params = m.params;
  state.m.assign(m.params.size(), 0.0f);
  state.v.assign(m.params.size(), 0.0f);
  absl::Status s = backend.SetState(state);
  if (!s.ok()) return s;
  s = WritePredictions(m, backend, *x, data->rows, output);
  if (!s.ok()) return s;
  return data->rows;
}

}  // namespace cairn::trainer
