// Per-epoch metric reporting of cairn-train: to the Cairn API
// (StudyService.AddTrialMeasurement), to the cloudml-hypertune metric file,
// or to stdout. Reporters are not thread-safe; one training loop uses one.
#ifndef CAIRN_TRAINER_REPORTER_H_
#define CAIRN_TRAINER_REPORTER_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trainer/model.h"

namespace cairn::trainer {

struct EpochReport {
  int64_t epoch = 0;   // Epochs completed (1-based).
  int64_t epochs = 0;  // Epochs planned.
  uint64_t step = 0;   // Global optimizer steps done.
  double elapsed_seconds = 0.0;
  // Metric id -> value: train_loss, and val_loss / val_accuracy when known.
  std::map<std::string, double> metrics;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Sends one report. Errors are returned for the caller to log; training
  // does not stop for a failed report.
  virtual absl::Status Report(const EpochReport& report) = 0;
  // Where reports go, for the log.
  virtual std::string Describe() const = 0;
};

// Human-readable line per epoch on `out`.
std::unique_ptr<Reporter> NewPrintReporter(FILE* out);

// The cloudml-hypertune protocol: one JSON object per line with sorted keys,
// {"global_step": "<step>", "<metric_tag>": "<value>", "timestamp": <unix
// seconds>, "trial": "<trial id>"}; values are strings except timestamp. The
// file keeps the last 100 lines (including those already there) and is
// rewritten whole on every report. Reports without `metric_tag` are skipped.
std::unique_ptr<Reporter> NewHypertuneReporter(std::string path,
                                               std::string metric_tag,
                                               std::string trial_id);

// One AddTrialMeasurement call per report to `server` (host:port, insecure)
// for `trial_name` ("studies/3/trials/7"), 10 s deadline, sending `token`
// (the job's CAIRN_TOKEN; none if empty).
std::unique_ptr<Reporter> NewGrpcReporter(const std::string& server,
                                          std::string trial_name,
                                          const std::string& token = "");

// The reporter the environment asks for: gRPC when CAIRN_SERVER and
// CAIRN_TRIAL_ID are set (trial name CAIRN_STUDY + "/trials/" +
// CAIRN_TRIAL_ID, or CAIRN_TRIAL_ID itself when it holds a '/'); else the
// hypertune file when CLOUD_ML_HP_METRIC_FILE is set (trial id from
// CLOUD_ML_TRIAL_ID, default "0"); else nullptr (printing only).
// InvalidArgument when CAIRN_TRIAL_ID is a bare id and CAIRN_STUDY is unset.
absl::StatusOr<std::unique_ptr<Reporter>> NewReporterFromEnv(
    const std::string& hypertune_metric);

// Shortest decimal text that reads back as `v` (like Python's repr).
std::string ShortestDouble(double v);

}  // namespace cairn::trainer

#endif  // CAIRN_TRAINER_REPORTER_H_
