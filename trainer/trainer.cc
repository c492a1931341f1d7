// The training run of cairn-train (see trainer.h).
#include "trainer/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trainer/checkpoint.h"
#include "trainer/data.h"
#include "trainer/export.h"
#include "trainer/reporter.h"

namespace cairn::trainer {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void OnStopSignal(int sig) { g_stop_signal.store(sig); }

using Clock = std::chrono::steady_clock;

// Features and targets of one split, normalized, ready for the backend.
struct Split {
  size_t rows = 0;
  std::vector<float> x;  // [rows, features]
  std::vector<float> y;  // Class index or target per row.
};

absl::StatusOr<std::vector<float>> Targets(
    const std::vector<std::string>& labels, Task task,
    const std::vector<std::string>& classes, const std::string& path) {
  std::vector<float> y(labels.size());
  std::map<std::string, int> index;
  for (size_t c = 0; c < classes.size(); ++c)
    index[classes[c]] = static_cast<int>(c);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (task == Task::kClassification) {
      auto it = index.find(labels[i]);
      if (it == index.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": data row ", i + 1, ": label '", labels[i],
                         "' is not a class of the training data"));
      }
      y[i] = static_cast<float>(it->second);
    } else {
      double v;
      if (!absl::SimpleAtod(labels[i], &v) || !std::isfinite(v)) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": data row ", i + 1, ": regression label '",
                         labels[i], "' is not a number"));
      }
      y[i] = static_cast<float>(v);
    }
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

struct EvalResult {
  double loss = 0.0;
  double accuracy = 0.0;
};

absl::StatusOr<EvalResult> Evaluate(Backend& backend, const ModelSpec& spec,
                                    const Split& data, int chunk) {
  const int nf = spec.InputSize(), nout = spec.OutputSize();
  std::vector<float> out(static_cast<size_t>(chunk) * nout);
  double loss = 0.0;
  size_t correct = 0;
  for (size_t start = 0; start < data.rows; start += chunk) {
    const int n = static_cast<int>(std::min<size_t>(chunk, data.rows - start));
    absl::Status s = backend.Forward(data.x.data() + start * nf, n, out.data());
    if (!s.ok()) return s;
    for (int i = 0; i < n; ++i) {
      const float* r = out.data() + static_cast<size_t>(i) * nout;
      const float y = data.y[start + i];
      if (spec.task == Task::kClassification) {
        const int label = static_cast<int>(y);
        loss -= std::log(std::max(static_cast<double>(r[label]), 1e-30));
        if (std::max_element(r, r + nout) - r == label) ++correct;
      } else {
        const double e = static_cast<double>(r[0]) - y;
        loss += e * e;
      }
    }
  }
  EvalResult res;
  res.loss = loss / std::max<size_t>(data.rows, 1);
  res.accuracy = static_cast<double>(correct) / std::max<size_t>(data.rows, 1);
  return res;
}

std::string Fingerprint(const TrainOptions& o, const ModelSpec& spec,
                        size_t train_rows, size_t val_rows) {
  return absl::StrCat("v1 task=", TaskName(spec.task),
                      " layers=", absl::StrJoin(spec.layer_sizes, ","),
                      " act=", ActivationName(spec.activation),
                      " opt=", OptimizerName(o.hp.optimizer),
                      " lr=", ShortestDouble(o.hp.learning_rate),
                      " mom=", ShortestDouble(o.hp.momentum),
                      " wd=", ShortestDouble(o.hp.weight_decay),
                      " dropout=", ShortestDouble(o.hp.dropout),
                      " seed=", o.hp.seed, " batch=", o.batch_size,
                      " train_rows=", train_rows, " val_rows=", val_rows);
}

int DefaultThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw == 0 ? 1 : hw, 1, 4));
}

}  // namespace

absl::Status ValidateOptions(const TrainOptions& o) {
  auto bad = [](const std::string& flag, const std::string& value,
                const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", value, ": ", why));
  };
  if (o.train_path.empty()) {
    return absl::InvalidArgumentError(
        "--train: a training CSV file is required");
  }
  if (o.validation_path.empty() &&
      !(o.validation_fraction > 0.0 && o.validation_fraction < 1.0)) {
    return bad("validation-fraction", ShortestDouble(o.validation_fraction),
               "must be in (0, 1) when --validation is not given");
  }
  if (!(o.hp.learning_rate > 0.0f) || !std::isfinite(o.hp.learning_rate)) {
    return bad("learning_rate", ShortestDouble(o.hp.learning_rate),
               "must be > 0");
  }
  if (!(o.hp.momentum >= 0.0f && o.hp.momentum < 1.0f)) {
    return bad("momentum", ShortestDouble(o.hp.momentum), "must be in [0, 1)");
  }
  if (!(o.hp.weight_decay >= 0.0f) || !std::isfinite(o.hp.weight_decay)) {
    return bad("weight_decay", ShortestDouble(o.hp.weight_decay),
               "must be >= 0");
  }
  if (!(o.hp.dropout >= 0.0f && o.hp.dropout < 1.0f)) {
    return bad("dropout", ShortestDouble(o.hp.dropout), "must be in [0, 1)");
  }
  if (o.batch_size < 1 || o.batch_size > 65536) {
    return bad("batch_size", absl::StrCat(o.batch_size),
               "must be in [1, 65536]");
  }
  if (o.epochs < 0)
    return bad("epochs", absl::StrCat(o.epochs), "must be >= 0");
  for (int h : o.hidden_units) {
    if (h < 1 || h > 1 << 16) {
      return bad("hidden_units", absl::StrJoin(o.hidden_units, ","),
                 "every width must be in [1, 65536]");
    }
  }
  if (o.checkpoint_every < 0) {
    return bad("checkpoint-every", absl::StrCat(o.checkpoint_every),
               "must be >= 0");
  }
  if (!(o.checkpoint_seconds >= 0.0)) {
    return bad("checkpoint-seconds", ShortestDouble(o.checkpoint_seconds),
               "must be >= 0");
  }
  if (o.keep_checkpoints < 1) {
    return bad("keep-checkpoints", absl::StrCat(o.keep_checkpoints),
               "must be >= 1");
  }
  if (o.threads < 0)
    return bad("threads", absl::StrCat(o.threads), "must be >= 0");
  return absl::OkStatus();
}

void InstallStopSignalHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

absl::StatusOr<int> RunTraining(const TrainOptions& o) {
  absl::Status s = ValidateOptions(o);
  if (!s.ok()) return s;
  const auto attempt_start = Clock::now();

  // ---- Data ----
  absl::StatusOr<CsvData> train_csv =
      ReadCsv(o.train_path, LabelFlagResolver(o.label));
  if (!train_csv.ok()) return train_csv.status();
  const int nf = static_cast<int>(train_csv->feature_names.size());
  if (nf == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.train_path, ": no feature columns besides the label"));
  }
  std::vector<std::string> classes;
  if (o.task == Task::kClassification) {
    classes = SortedClasses(train_csv->labels);
    if (classes.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.train_path, ": classification needs at least 2 classes, label '",
          train_csv->label_name, "' has ", classes.size()));
    }
  }
  absl::StatusOr<std::vector<float>> y_all =
      Targets(train_csv->labels, o.task, classes, o.train_path);
  if (!y_all.ok()) return y_all.status();

  Split train, val;
  if (o.validation_path.empty()) {
    if (train_csv->rows < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.train_path, ": needs at least 2 rows to split off validation"));
    }
    std::vector<uint32_t> tr, va;
    SplitRows(train_csv->rows, o.validation_fraction, o.hp.seed, &tr, &va);
    train = Gather(train_csv->features, *y_all, nf, tr);
    val = Gather(train_csv->features, *y_all, nf, va);
  } else {
    train.rows = train_csv->rows;
    train.x = std::move(train_csv->features);
    train.y = std::move(*y_all);
    const std::string& label_name = train_csv->label_name;
    const int label_col = train_csv->label_column;
    absl::StatusOr<CsvData> val_csv = ReadCsv(
        o.validation_path,
        [&](const std::vector<std::string>& header,
            int cols) -> absl::StatusOr<int> {
          if (!header.empty()) {
            for (int c = 0; c < cols; ++c) {
              if (header[c] == label_name) return c;
            }
          }
          if (cols != nf + 1) {
            return absl::InvalidArgumentError(absl::StrCat(
                "has ", cols, " columns, the training file has ", nf + 1));
          }
          return label_col;
        });
    if (!val_csv.ok()) return val_csv.status();
    if (static_cast<int>(val_csv->feature_names.size()) != nf) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.validation_path, ": has ", val_csv->feature_names.size(),
          " feature columns, the training file has ", nf));
    }
    absl::StatusOr<std::vector<float>> vy =
        Targets(val_csv->labels, o.task, classes, o.validation_path);
    if (!vy.ok()) return vy.status();
    val.rows = val_csv->rows;
    val.x = std::move(val_csv->features);
    val.y = std::move(*vy);
  }
  std::vector<float> mean, stdev;
  ComputeNormalization(train.x, train.rows, nf, &mean, &stdev);
  Normalize(mean, stdev, train.rows, &train.x);
  Normalize(mean, stdev, val.rows, &val.x);

  // ---- Model and backend ----
  ModelSpec spec;
  spec.task = o.task;
  spec.activation = o.activation;
  spec.layer_sizes.push_back(nf);
  for (int h : o.hidden_units) spec.layer_sizes.push_back(h);
  spec.layer_sizes.push_back(
      o.task == Task::kClassification ? static_cast<int>(classes.size()) : 1);
  const int threads = o.threads > 0 ? o.threads : DefaultThreads();
  constexpr int kEvalChunk = 512;
  absl::StatusOr<std::unique_ptr<Backend>> backend = Backend::Create(
      o.backend, spec, o.hp, threads, std::max(o.batch_size, kEvalChunk));
  if (!backend.ok()) return backend.status();
  std::fprintf(stderr,
               "cairn-train: %zu train rows, %zu validation rows, %d features, "
               "layers %s, backend %s (%d threads)\n",
               train.rows, val.rows, nf,
               absl::StrJoin(spec.layer_sizes, "-").c_str(),
               (*backend)->Name().c_str(), threads);

  // ---- State: fresh or resumed ----
  Checkpoint ckpt;
  ckpt.fingerprint = Fingerprint(o, spec, train.rows, val.rows);
  std::unique_ptr<CheckpointManager> ckpts;
  bool resumed = false;
  if (!o.job_dir.empty()) {
    ckpts = std::make_unique<CheckpointManager>(o.job_dir, o.keep_checkpoints);
    std::vector<std::string> skipped;
    absl::StatusOr<Checkpoint> last = ckpts->LoadLatest(&skipped);
    for (const std::string& why : skipped) {
      std::fprintf(stderr, "cairn-train: skipping checkpoint %s\n",
                   why.c_str());
    }
    if (last.ok()) {
      if (last->fingerprint != ckpt.fingerprint) {
        return absl::FailedPreconditionError(absl::StrCat(
            "--job-dir=", o.job_dir, " holds a checkpoint of a different run (",
            last->fingerprint, "); this run is (", ckpt.fingerprint,
            "); use a fresh --job-dir"));
      }
      if (last->order.size() != train.rows || last->position > train.rows ||
          last->state.params.size() != spec.NumParams()) {
        return absl::DataLossError("checkpoint state does not match the data");
      }
      ckpt = std::move(*last);
      resumed = true;
      std::fprintf(stderr, "cairn-train: resumed at step %llu (epoch %llu)\n",
                   static_cast<unsigned long long>(ckpt.step),
                   static_cast<unsigned long long>(ckpt.epoch));
    }
  }
  if (!resumed) {
    const size_t np = spec.NumParams();
    ckpt.state.params.assign(np, 0.0f);
    ckpt.state.m.assign(np, 0.0f);
    ckpt.state.v.assign(np, 0.0f);
    InitParams(spec, o.hp.seed, ckpt.state.params.data());
    ckpt.order = EpochOrder(train.rows, o.hp.seed, 0);
  }
  s = (*backend)->SetState(ckpt.state);
  if (!s.ok()) return s;

  absl::StatusOr<std::unique_ptr<Reporter>> env_reporter = NewReporterFromEnv(
      !o.hypertune_metric.empty()
          ? o.hypertune_metric
          : (o.task == Task::kClassification ? "val_accuracy" : "val_loss"));
  if (!env_reporter.ok()) return env_reporter.status();
  std::unique_ptr<Reporter> printer = NewPrintReporter(stdout);
  if (*env_reporter) {
    std::fprintf(stderr, "cairn-train: reporting to %s\n",
                 (*env_reporter)->Describe().c_str());
  }

  const double elapsed_before = ckpt.elapsed_seconds;
  auto elapsed = [&] {
    return elapsed_before +
           std::chrono::duration<double>(Clock::now() - attempt_start).count();
  };
  auto save = [&]() -> absl::Status {
    if (!ckpts) return absl::OkStatus();
    absl::Status st = (*backend)->GetState(&ckpt.state);
    if (!st.ok()) return st;
    ckpt.elapsed_seconds = elapsed();
    return ckpts->Save(ckpt);
  };
  int64_t sleep_us = 0;  // Test hook: slows steps down, never changes math.
  if (const char* e = std::getenv("CAIRN_TRAIN_TEST_STEP_SLEEP_US")) {
    sleep_us = std::atoll(e);
  }

  // ---- Training loop ----
  std::vector<float> bx(static_cast<size_t>(o.batch_size) * nf),
      by(o.batch_size);
  auto last_save = Clock::now();
  EvalResult last_eval;
  bool have_eval = false;
  while (ckpt.epoch < static_cast<uint64_t>(o.epochs)) {
    while (ckpt.position < train.rows) {
      if (g_stop_signal.load() != 0) break;
      const int n = static_cast<int>(
          std::min<uint64_t>(o.batch_size, train.rows - ckpt.position));
      for (int i = 0; i < n; ++i) {
        const uint32_t r = ckpt.order[ckpt.position + i];
        std::copy_n(train.x.data() + static_cast<size_t>(r) * nf, nf,
                    bx.data() + static_cast<size_t>(i) * nf);
        by[i] = train.y[r];
      }
      absl::StatusOr<float> loss =
          (*backend)->TrainStep(bx.data(), by.data(), n, ckpt.step);
      if (!loss.ok()) return loss.status();
      if (!std::isfinite(*loss)) {
        return absl::InvalidArgumentError(
            absl::StrCat("training diverged: loss is ", *loss, " at step ",
                         ckpt.step, " (try a smaller --learning_rate)"));
      }
      ckpt.epoch_loss_sum += *loss;
      ++ckpt.epoch_batches;
      ++ckpt.step;
      ckpt.position += n;
      if (sleep_us > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      const bool by_steps =
          o.checkpoint_every > 0 && ckpt.step % o.checkpoint_every == 0;
      const bool by_time =
          o.checkpoint_seconds > 0 &&
          std::chrono::duration<double>(Clock::now() - last_save).count() >=
              o.checkpoint_seconds;
      if (ckpts && (by_steps || by_time)) {
        s = save();
        if (!s.ok()) return s;
        last_save = Clock::now();
      }
    }
    if (g_stop_signal.load() != 0) break;
    // End of epoch: evaluate, report, move to the next epoch's order.
    ckpt.last_train_loss =
        ckpt.epoch_batches > 0 ? ckpt.epoch_loss_sum / ckpt.epoch_batches : 0.0;
    absl::StatusOr<EvalResult> ev = Evaluate(**backend, spec, val, kEvalChunk);
    if (!ev.ok()) return ev.status();
    last_eval = *ev;
    have_eval = true;
    EpochReport report;
    report.epoch = static_cast<int64_t>(ckpt.epoch) + 1;
    report.epochs = o.epochs;
    report.step = ckpt.step;
    report.elapsed_seconds = elapsed();
    report.metrics["train_loss"] = ckpt.last_train_loss;
    report.metrics["val_loss"] = ev->loss;
    if (o.task == Task::kClassification)
      report.metrics["val_accuracy"] = ev->accuracy;
    printer->Report(report).IgnoreError();
    if (*env_reporter) {
      absl::Status rs = (*env_reporter)->Report(report);
      if (!rs.ok()) {
        std::fprintf(stderr, "cairn-train: report failed: %s\n",
                     rs.ToString().c_str());
      }
    }
    ++ckpt.epoch;
    ckpt.position = 0;
    ckpt.epoch_loss_sum = 0.0;
    ckpt.epoch_batches = 0;
    ckpt.order = EpochOrder(train.rows, o.hp.seed, ckpt.epoch);
  }

  if (const int sig = g_stop_signal.load(); sig != 0) {
    s = save();
    if (!s.ok()) return s;
    std::fprintf(stderr,
                 "cairn-train: stopped by signal %d at step %llu%s; exiting "
                 "with %d\n",
                 sig, static_cast<unsigned long long>(ckpt.step),
                 ckpts ? " after writing a checkpoint" : "", kExitPreempted);
    return kExitPreempted;
  }
  // Final checkpoint: a restart after this point only re-exports.
  s = save();
  if (!s.ok()) return s;
  if (!have_eval) {
    absl::StatusOr<EvalResult> ev = Evaluate(**backend, spec, val, kEvalChunk);
    if (!ev.ok()) return ev.status();
    last_eval = *ev;
  }

  // ---- Export ----
  if (!o.job_dir.empty()) {
    ExportedModel model;
    model.spec = spec;
    model.feature_names = train_csv->feature_names;
    model.label_name = train_csv->label_name;
    model.label_column = train_csv->label_column;
    model.num_columns = train_csv->num_columns;
    model.classes = classes;
    model.mean = mean;
    model.std = stdev;
    s = (*backend)->GetState(&ckpt.state);
    if (!s.ok()) return s;
    model.params = ckpt.state.params;
    s = ExportModel(o.job_dir + "/model", model);
    if (!s.ok()) return s;
    std::fprintf(stderr, "cairn-train: exported model to %s/model\n",
                 o.job_dir.c_str());
  }

  nlohmann::json final_metrics;
  final_metrics["epochs"] = ckpt.epoch;
  final_metrics["global_step"] = ckpt.step;
  final_metrics["train_loss"] = ckpt.last_train_loss;
  final_metrics["val_loss"] = last_eval.loss;
  if (o.task == Task::kClassification)
    final_metrics["val_accuracy"] = last_eval.accuracy;
  std::printf("%s\n", final_metrics.dump().c_str());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace cairn::trainer
