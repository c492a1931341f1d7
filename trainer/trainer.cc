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
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trainer/checkpoint.h"
#include "trainer/data.h"
#include "trainer/dataset.h"
#include "trainer/export.h"
#include "trainer/reporter.h"

namespace cairn::trainer {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void OnStopSignal(int sig) { g_stop_signal.store(sig); }

using Clock = std::chrono::steady_clock;

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

namespace {

constexpr int kEvalChunk = 512;  // Rows per forward pass when evaluating.

ModelSpec MakeSpec(const TrainOptions& o, const Dataset& d) {
  ModelSpec spec;
  spec.task = o.task;
  spec.activation = o.activation;
  spec.layer_sizes.push_back(d.features);
  for (int h : o.hidden_units) spec.layer_sizes.push_back(h);
  spec.layer_sizes.push_back(
      o.task == Task::kClassification ? static_cast<int>(d.classes.size()) : 1);
  return spec;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const TrainOptions& o,
                                                     const Dataset& d,
                                                     const ModelSpec& spec) {
  const int threads = o.threads > 0 ? o.threads : DefaultThreads();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Backend::Create(
      o.backend, spec, o.hp, threads, std::max(o.batch_size, kEvalChunk));
  if (!backend.ok()) return backend.status();
  std::fprintf(stderr,
               "cairn-train: %zu train rows, %zu validation rows, %d features, "
               "layers %s, backend %s (%d threads)\n",
               d.train.rows, d.val.rows, d.features,
               absl::StrJoin(spec.layer_sizes, "-").c_str(),
               (*backend)->Name().c_str(), threads);
  return backend;
}

// One attempt of a run: its state (fresh, or resumed from the newest
// checkpoint in --job-dir), the epochs, and the end (export, final metrics).
class TrainingRun {
 public:
  TrainingRun(const TrainOptions& o, Clock::time_point attempt_start,
              Dataset data, ModelSpec spec, std::unique_ptr<Backend> backend)
      : o_(o),
        attempt_start_(attempt_start),
        data_(std::move(data)),
        spec_(std::move(spec)),
        backend_(std::move(backend)) {}

  // Restores or initializes the state and opens the reporters.
  absl::Status Start();
  // Trains the remaining epochs; see RunTraining for the result.
  absl::StatusOr<int> Run();

 private:
  absl::Status RestoreState();
  absl::StatusOr<bool> Resume();  // True when a checkpoint was resumed.
  void InitState();
  absl::Status OpenReporters();
  double Elapsed() const;
  absl::Status Save();
  absl::Status TrainEpoch();  // Returns early when a stop signal arrived.
  absl::Status TrainBatch();
  absl::Status MaybeCheckpoint();
  absl::Status EndEpoch();
  void Report(const EvalResult& ev);
  absl::StatusOr<int> StopBySignal(int sig);
  absl::StatusOr<int> Finish();
  absl::Status Export();
  void PrintFinalMetrics() const;

  const TrainOptions& o_;
  const Clock::time_point attempt_start_;
  Dataset data_;
  const ModelSpec spec_;
  std::unique_ptr<Backend> backend_;
  Checkpoint ckpt_;
  std::unique_ptr<CheckpointManager> ckpts_;  // Null without --job-dir.
  std::unique_ptr<Reporter> env_reporter_;    // Null outside a Cairn job.
  std::unique_ptr<Reporter> printer_;
  double elapsed_before_ = 0.0;  // Of the attempts before this one.
  int64_t sleep_us_ = 0;  // Test hook: slows steps down, never changes math.
  std::vector<float> bx_, by_;  // One batch.
  Clock::time_point last_save_;
  EvalResult last_eval_;
  bool have_eval_ = false;
};

absl::Status TrainingRun::Start() {
  absl::Status s = RestoreState();
  if (!s.ok()) return s;
  s = OpenReporters();
  if (!s.ok()) return s;
  elapsed_before_ = ckpt_.elapsed_seconds;
  if (const char* e = std::getenv("CAIRN_TRAIN_TEST_STEP_SLEEP_US")) {
    sleep_us_ = std::atoll(e);
  }
  return absl::OkStatus();
}

absl::Status TrainingRun::RestoreState() {
  ckpt_.fingerprint = Fingerprint(o_, spec_, data_.train.rows, data_.val.rows);
  bool resumed = false;
  if (!o_.job_dir.empty()) {
    ckpts_ =
        std::make_unique<CheckpointManager>(o_.job_dir, o_.keep_checkpoints);
    absl::StatusOr<bool> r = Resume();
    if (!r.ok()) return r.status();
    resumed = *r;
  }
  if (!resumed) InitState();
  return backend_->SetState(ckpt_.state);
}

absl::StatusOr<bool> TrainingRun::Resume() {
  std::vector<std::string> skipped;
  absl::StatusOr<Checkpoint> last = ckpts_->LoadLatest(&skipped);
  for (const std::string& why : skipped) {
    std::fprintf(stderr, "cairn-train: skipping checkpoint %s\n", why.c_str());
  }
  if (!last.ok()) return false;
  if (last->fingerprint != ckpt_.fingerprint) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--job-dir=", o_.job_dir, " holds a checkpoint of a different run (",
        last->fingerprint, "); this run is (", ckpt_.fingerprint,
        "); use a fresh --job-dir"));
  }
  if (last->order.size() != data_.train.rows ||
      last->position > data_.train.rows ||
      last->state.params.size() != spec_.NumParams()) {
    return absl::DataLossError("checkpoint state does not match the data");
  }
  ckpt_ = std::move(*last);
  std::fprintf(stderr, "cairn-train: resumed at step %llu (epoch %llu)\n",
               static_cast<unsigned long long>(ckpt_.step),
               static_cast<unsigned long long>(ckpt_.epoch));
  return true;
}

void TrainingRun::InitState() {
  const size_t np = spec_.NumParams();
  ckpt_.state.params.assign(np, 0.0f);
  ckpt_.state.m.assign(np, 0.0f);
  ckpt_.state.v.assign(np, 0.0f);
  InitParams(spec_, o_.hp.seed, ckpt_.state.params.data());
  ckpt_.order = EpochOrder(data_.train.rows, o_.hp.seed, 0);
}

absl::Status TrainingRun::OpenReporters() {
  absl::StatusOr<std::unique_ptr<Reporter>> env = NewReporterFromEnv(
      !o_.hypertune_metric.empty()
          ? o_.hypertune_metric
          : (o_.task == Task::kClassification ? "val_accuracy" : "val_loss"));
  if (!env.ok()) return env.status();
  env_reporter_ = std::move(*env);
  printer_ = NewPrintReporter(stdout);
  if (env_reporter_) {
    std::fprintf(stderr, "cairn-train: reporting to %s\n",
                 env_reporter_->Describe().c_str());
  }
  return absl::OkStatus();
}

double TrainingRun::Elapsed() const {
  return elapsed_before_ +
         std::chrono::duration<double>(Clock::now() - attempt_start_).count();
}

absl::Status TrainingRun::Save() {
  if (!ckpts_) return absl::OkStatus();
  absl::Status s = backend_->GetState(&ckpt_.state);
  if (!s.ok()) return s;
  ckpt_.elapsed_seconds = Elapsed();
  return ckpts_->Save(ckpt_);
}

absl::StatusOr<int> TrainingRun::Run() {
  bx_.resize(static_cast<size_t>(o_.batch_size) * data_.features);
  by_.resize(o_.batch_size);
  last_save_ = Clock::now();
  while (ckpt_.epoch < static_cast<uint64_t>(o_.epochs)) {
    absl::Status s = TrainEpoch();
    if (!s.ok()) return s;
    if (g_stop_signal.load() != 0) break;
    s = EndEpoch();
    if (!s.ok()) return s;
  }
  if (const int sig = g_stop_signal.load(); sig != 0) return StopBySignal(sig);
  return Finish();
}

absl::Status TrainingRun::TrainEpoch() {
  while (ckpt_.position < data_.train.rows) {
    if (g_stop_signal.load() != 0) break;
    absl::Status s = TrainBatch();
    if (!s.ok()) return s;
    if (sleep_us_ > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    s = MaybeCheckpoint();
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status TrainingRun::TrainBatch() {
  const int nf = data_.features;
  const Split& train = data_.train;
  const int n = static_cast<int>(
      std::min<uint64_t>(o_.batch_size, train.rows - ckpt_.position));
  for (int i = 0; i < n; ++i) {
    const uint32_t r = ckpt_.order[ckpt_.position + i];
    std::copy_n(train.x.data() + static_cast<size_t>(r) * nf, nf,
                bx_.data() + static_cast<size_t>(i) * nf);
    by_[i] = train.y[r];
  }
  absl::StatusOr<float> loss =
      backend_->TrainStep(bx_.data(), by_.data(), n, ckpt_.step);
  if (!loss.ok()) return loss.status();
  if (!std::isfinite(*loss)) {
    return absl::InvalidArgumentError(
        absl::StrCat("training diverged: loss is ", *loss, " at step ",
                     ckpt_.step, " (try a smaller --learning_rate)"));
  }
  ckpt_.epoch_loss_sum += *loss;
  ++ckpt_.epoch_batches;
  ++ckpt_.step;
  ckpt_.position += n;
  return absl::OkStatus();
}

absl::Status TrainingRun::MaybeCheckpoint() {
  const bool by_steps =
      o_.checkpoint_every > 0 && ckpt_.step % o_.checkpoint_every == 0;
  const bool by_time =
      o_.checkpoint_seconds > 0 &&
      std::chrono::duration<double>(Clock::now() - last_save_).count() >=
          o_.checkpoint_seconds;
  if (!ckpts_ || !(by_steps || by_time)) return absl::OkStatus();
  absl::Status s = Save();
  if (!s.ok()) return s;
  last_save_ = Clock::now();
  return absl::OkStatus();
}

// End of an epoch: evaluate, report, move to the next epoch's order.
absl::Status TrainingRun::EndEpoch() {
  ckpt_.last_train_loss = ckpt_.epoch_batches > 0
                              ? ckpt_.epoch_loss_sum / ckpt_.epoch_batches
                              : 0.0;
  absl::StatusOr<EvalResult> ev =
      Evaluate(*backend_, spec_, data_.val, kEvalChunk);
  if (!ev.ok()) return ev.status();
  last_eval_ = *ev;
  have_eval_ = true;
  Report(*ev);
  ++ckpt_.epoch;
  ckpt_.position = 0;
  ckpt_.epoch_loss_sum = 0.0;
  ckpt_.epoch_batches = 0;
  ckpt_.order = EpochOrder(data_.train.rows, o_.hp.seed, ckpt_.epoch);
  return absl::OkStatus();
}

void TrainingRun::Report(const EvalResult& ev) {
  EpochReport report;
  report.epoch = static_cast<int64_t>(ckpt_.epoch) + 1;
  report.epochs = o_.epochs;
  report.step = ckpt_.step;
  report.elapsed_seconds = Elapsed();
  report.metrics["train_loss"] = ckpt_.last_train_loss;
  report.metrics["val_loss"] = ev.loss;
  if (o_.task == Task::kClassification)
    report.metrics["val_accuracy"] = ev.accuracy;
  printer_->Report(report).IgnoreError();  // Best effort to stdout.
  if (!env_reporter_) return;
  absl::Status s = env_reporter_->Report(report);
  if (!s.ok()) {
    std::fprintf(stderr, "cairn-train: report failed: %s\n",
                 s.ToString().c_str());
  }
}

absl::StatusOr<int> TrainingRun::StopBySignal(int sig) {
  absl::Status s = Save();
  if (!s.ok()) return s;
  std::fprintf(stderr,
               "cairn-train: stopped by signal %d at step %llu%s; exiting "
               "with %d\n",
               sig, static_cast<unsigned long long>(ckpt_.step),
               ckpts_ ? " after writing a checkpoint" : "", kExitPreempted);
  return kExitPreempted;
}

absl::StatusOr<int> TrainingRun::Finish() {
  // Final checkpoint: a restart after this point only re-exports.
  absl::Status s = Save();
  if (!s.ok()) return s;
  if (!have_eval_) {
    absl::StatusOr<EvalResult> ev =
        Evaluate(*backend_, spec_, data_.val, kEvalChunk);
    if (!ev.ok()) return ev.status();
    last_eval_ = *ev;
  }
  if (!o_.job_dir.empty()) {
    s = Export();
    if (!s.ok()) return s;
  }
  PrintFinalMetrics();
  return kExitOk;
}

absl::Status TrainingRun::Export() {
  ExportedModel model;
  model.spec = spec_;
  model.feature_names = data_.feature_names;
  model.label_name = data_.label_name;
  model.label_column = data_.label_column;
  model.num_columns = data_.num_columns;
  model.classes = data_.classes;
  model.mean = data_.mean;
  model.std = data_.stdev;
  absl::Status s = backend_->GetState(&ckpt_.state);
  if (!s.ok()) return s;
  model.params = ckpt_.state.params;
  s = ExportModel(o_.job_dir + "/model", model);
  if (!s.ok()) return s;
  std::fprintf(stderr, "cairn-train: exported model to %s/model\n",
               o_.job_dir.c_str());
  return absl::OkStatus();
}

void TrainingRun::PrintFinalMetrics() const {
  nlohmann::json final_metrics;
  final_metrics["epochs"] = ckpt_.epoch;
  final_metrics["global_step"] = ckpt_.step;
  final_metrics["train_loss"] = ckpt_.last_train_loss;
  final_metrics["val_loss"] = last_eval_.loss;
  if (o_.task == Task::kClassification)
    final_metrics["val_accuracy"] = last_eval_.accuracy;
  std::printf("%s\n", final_metrics.dump().c_str());
  std::fflush(stdout);
}

}  // namespace

absl::StatusOr<int> RunTraining(const TrainOptions& o) {
  absl::Status s = ValidateOptions(o);
  if (!s.ok()) return s;
  const auto attempt_start = Clock::now();
  absl::StatusOr<Dataset> data = LoadDataset(o);
  if (!data.ok()) return data.status();
  ModelSpec spec = MakeSpec(o, *data);
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      MakeBackend(o, *data, spec);
  if (!backend.ok()) return backend.status();
  TrainingRun run(o, attempt_start, std::move(*data), std::move(spec),
                  std::move(*backend));
  s = run.Start();
  if (!s.ok()) return s;
  return run.Run();
}

}  // namespace cairn::trainer
