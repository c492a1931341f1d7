// cairn-train: trains an MLP on a CSV file (see trainer.h), or with the
// `predict` subcommand applies an exported model to a CSV file.
//
// Exit codes: 0 done, 1 error, 2 bad command line, 143 stopped by
// SIGTERM/SIGINT after writing a checkpoint (rerun to resume).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "trainer/export.h"
#include "trainer/trainer.h"

namespace {

using cairn::trainer::TrainOptions;

// Integer flag values may come from a tuner as "64" or "64.0".
absl::StatusOr<int64_t> ParseInt(const std::string& flag,
                                 const std::string& v) {
  int64_t i;
  if (absl::SimpleAtoi(v, &i)) return i;
  double d;
  if (absl::SimpleAtod(v, &d) && std::isfinite(d) && d == std::floor(d) &&
      std::fabs(d) < 9e15) {
    return static_cast<int64_t>(d);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", v, ": not an integer"));
}

absl::StatusOr<double> ParseDouble(const std::string& flag,
                                   const std::string& v) {
  double d;
  if (absl::SimpleAtod(v, &d) && std::isfinite(d)) return d;
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", v, ": not a number"));
}

// "128,64" -> {128, 64}; "" -> no hidden layer. Brackets/spaces tolerated.
absl::StatusOr<std::vector<int>> ParseHidden(const std::string& v) {
  absl::string_view s = v;
  absl::ConsumePrefix(&s, "[");
  absl::ConsumeSuffix(&s, "]");
  std::vector<int> out;
  for (absl::string_view part :
       absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    absl::StatusOr<int64_t> w =
        ParseInt("hidden_units", std::string(absl::StripAsciiWhitespace(part)));
    if (!w.ok() || *w < 1 || *w > 65536) {
      return absl::InvalidArgumentError(
          absl::StrCat("--hidden_units=", v,
                       ": expected comma-separated layer widths in [1, 65536], "
                       "e.g. 128,64"));
    }
    out.push_back(static_cast<int>(*w));
  }
  return out;
}

int Fail(const absl::Status& s, int code) {
  std::fprintf(stderr, "cairn-train: error: %s\n",
               std::string(s.message()).c_str());
  return code;
}

// The training flags kept as text (a tuner may pass "64.0" for an integer)
// and converted after parsing; the initial values are the defaults --help
// shows. Flags that need no conversion go straight into TrainOptions.
struct FlagText {
  std::string task = "classification", activation = "relu", optimizer = "adam",
              backend = "auto", hidden = "128";
  std::string lr = "0.001", momentum = "0.9", weight_decay = "0", dropout = "0",
              validation_fraction = "0.2", checkpoint_seconds = "60";
  std::string batch_size = "64", epochs = "10", seed = "0",
              checkpoint_every = "0", keep = "3", threads = "0";
};

// The `predict` subcommand's flags.
struct PredictFlags {
  std::string model_dir, input, output;
};

// The data flags: where the examples come from and what to predict.
void AddDataFlags(CLI::App& app, TrainOptions& o, FlagText& f) {
  app.add_option("--train", o.train_path, "Training CSV (plain or .gz)");
  app.add_option("--validation", o.validation_path,
                 "Validation CSV; default: split off --validation-fraction");
  app.add_option("--validation-fraction,--validation_fraction",
                 f.validation_fraction,
                 "Fraction of --train held out for validation (seeded)");
  app.add_option("--label", o.label,
                 "Label column: header name or 0-based index; default last");
  app.add_option("--task", f.task, "classification|regression");
}

// The hyperparameters: model shape and optimization.
void AddHyperparameterFlags(CLI::App& app, FlagText& f) {
  app.add_option("--learning_rate,--learning-rate", f.lr, "Learning rate");
  app.add_option("--hidden_units,--hidden-units", f.hidden,
                 "Hidden layer widths, e.g. 128,64 (empty: none)");
  app.add_option("--activation", f.activation, "relu|tanh|gelu");
  app.add_option("--dropout", f.dropout, "Dropout rate of hidden activations");
  app.add_option("--weight_decay,--weight-decay", f.weight_decay,
                 "Weight decay (decoupled for adam, L2 for sgd)");
  app.add_option("--batch_size,--batch-size", f.batch_size, "Batch size");
  app.add_option("--epochs", f.epochs, "Epochs");
  app.add_option("--optimizer", f.optimizer, "sgd|adam");
  app.add_option("--momentum", f.momentum, "SGD momentum");
  app.add_option("--seed", f.seed, "Seed of split, order, init and dropout");
}

// The job flags: output directory, checkpoints, reporting and resources.
void AddJobFlags(CLI::App& app, TrainOptions& o, FlagText& f) {
  app.add_option("--job-dir,--job_dir", o.job_dir,
                 "Directory for checkpoints and the exported model/");
  app.add_option("--backend", f.backend, "auto|cpu|cuda");
  app.add_option("--checkpoint-every,--checkpoint_every", f.checkpoint_every,
                 "Checkpoint every N steps (0: off)");
  app.add_option("--checkpoint-seconds,--checkpoint_seconds",
                 f.checkpoint_seconds, "Checkpoint every S seconds (0: off)");
  app.add_option("--keep-checkpoints,--keep_checkpoints", f.keep,
                 "Checkpoints kept");
  app.add_option("--hypertune-metric,--hypertune_metric", o.hypertune_metric,
                 "Metric tag for CLOUD_ML_HP_METRIC_FILE (default val_accuracy "
                 "or val_loss)");
  app.add_option("--threads", f.threads,
                 "CPU threads (0: min(hardware, 4)); results are "
                 "bit-reproducible for a fixed count");
}

CLI::App* AddPredictCommand(CLI::App& app, PredictFlags& p) {
  CLI::App* predict = app.add_subcommand(
      "predict",
      "Writes one prediction per row of a CSV with an exported model");
  predict->add_option("--model", p.model_dir, "Model directory (job-dir/model)")
      ->required();
  predict->add_option("--input", p.input, "Input CSV")->required();
  predict->add_option("--output", p.output, "Output file; default stdout");
  return predict;
}

// Task, activation, optimizer, backend and hidden layer widths.
absl::Status ConvertChoiceFlags(const FlagText& f, TrainOptions& o) {
  absl::StatusOr<cairn::trainer::Task> t = cairn::trainer::ParseTask(f.task);
  if (!t.ok()) return t.status();
  o.task = *t;
  absl::StatusOr<cairn::trainer::Activation> a =
      cairn::trainer::ParseActivation(f.activation);
  if (!a.ok()) return a.status();
  o.activation = *a;
  absl::StatusOr<cairn::trainer::OptimizerKind> op =
      cairn::trainer::ParseOptimizer(f.optimizer);
  if (!op.ok()) return op.status();
  o.hp.optimizer = *op;
  absl::StatusOr<cairn::trainer::BackendKind> b =
      cairn::trainer::ParseBackendKind(f.backend);
  if (!b.ok()) return b.status();
  o.backend = *b;
  absl::StatusOr<std::vector<int>> h = ParseHidden(f.hidden);
  if (!h.ok()) return h.status();
  o.hidden_units = *h;
  return absl::OkStatus();
}

// The real-valued flags.
absl::Status ConvertRealFlags(const FlagText& f, TrainOptions& o) {
  struct D {
    const char* flag;
    const std::string* text;
    double* out;
  };
  double dlr, dmom, dwd, ddrop;
  for (const D& d :
       {D{"learning_rate", &f.lr, &dlr}, D{"momentum", &f.momentum, &dmom},
        D{"weight_decay", &f.weight_decay, &dwd},
        D{"dropout", &f.dropout, &ddrop},
        D{"validation-fraction", &f.validation_fraction,
          &o.validation_fraction},
        D{"checkpoint-seconds", &f.checkpoint_seconds,
          &o.checkpoint_seconds}}) {
    absl::StatusOr<double> v = ParseDouble(d.flag, *d.text);
    if (!v.ok()) return v.status();
    *d.out = *v;
  }
  o.hp.learning_rate = static_cast<float>(dlr);
  o.hp.momentum = static_cast<float>(dmom);
  o.hp.weight_decay = static_cast<float>(dwd);
  o.hp.dropout = static_cast<float>(ddrop);
  return absl::OkStatus();
}

// The integer flags, range-checked.
absl::Status ConvertIntegerFlags(const FlagText& f, TrainOptions& o) {
  struct I {
    const char* flag;
    const std::string* text;
    int64_t* out;
  };
  int64_t ib, ie, is, ik, it;
  for (const I& i :
       {I{"batch_size", &f.batch_size, &ib}, I{"epochs", &f.epochs, &ie},
        I{"seed", &f.seed, &is},
        I{"checkpoint-every", &f.checkpoint_every, &o.checkpoint_every},
        I{"keep-checkpoints", &f.keep, &ik}, I{"threads", &f.threads, &it}}) {
    absl::StatusOr<int64_t> v = ParseInt(i.flag, *i.text);
    if (!v.ok()) return v.status();
    *i.out = *v;
  }
  if (ib < 1 || ib > 65536 || ie < 0 || ie > 1000000 || ik < 1 || ik > 1000 ||
      it < 0 || it > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "out of range: --batch_size=", f.batch_size, " (1..65536), --epochs=",
        f.epochs, " (0..1e6), --keep-checkpoints=", f.keep,
        " (1..1000), --threads=", f.threads, " (0..1024)"));
  }
  o.batch_size = static_cast<int>(ib);
  o.epochs = static_cast<int>(ie);
  o.hp.seed = static_cast<uint64_t>(is);
  o.keep_checkpoints = static_cast<int>(ik);
  o.threads = static_cast<int>(it);
  return absl::OkStatus();
}

// Converts the flag text into `o` and validates the result.
absl::Status ConvertFlags(const FlagText& f, TrainOptions& o) {
  if (absl::Status s = ConvertChoiceFlags(f, o); !s.ok()) return s;
  if (absl::Status s = ConvertRealFlags(f, o); !s.ok()) return s;
  if (absl::Status s = ConvertIntegerFlags(f, o); !s.ok()) return s;
  return cairn::trainer::ValidateOptions(o);
}

int RunPredict(const PredictFlags& p) {
  absl::StatusOr<size_t> rows =
      cairn::trainer::PredictCsv(p.model_dir, p.input, p.output);
  if (!rows.ok()) return Fail(rows.status(), cairn::trainer::kExitError);
  std::fprintf(stderr, "cairn-train: predicted %zu rows\n", *rows);
  return 0;
}

int RunTrain(const FlagText& f, TrainOptions& o) {
  const absl::Status flags_status = ConvertFlags(f, o);
  if (!flags_status.ok()) return Fail(flags_status, cairn::trainer::kExitUsage);
  cairn::trainer::InstallStopSignalHandlers();
  absl::StatusOr<int> code = cairn::trainer::RunTraining(o);
  if (!code.ok()) return Fail(code.status(), cairn::trainer::kExitError);
  return *code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cairn-train: trains a multilayer perceptron on a CSV file.\n"
      "Exit codes: 0 done, 1 error, 2 usage, 143 stopped by SIGTERM after a "
      "checkpoint."};
  app.option_defaults()->always_capture_default();
  TrainOptions o;
  FlagText flags;
  AddDataFlags(app, o, flags);
  AddHyperparameterFlags(app, flags);
  AddJobFlags(app, o, flags);
  PredictFlags predict_flags;
  CLI::App* predict = AddPredictCommand(app, predict_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cairn-train: error: %s (see --help)\n", e.what());
    return cairn::trainer::kExitUsage;
  }
  if (predict->parsed()) return RunPredict(predict_flags);
  return RunTrain(flags, o);
}
