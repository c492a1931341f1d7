// Output formatting of the cairn CLI: JSON objects for scripts and aligned
// text tables for people. All functions are pure and thread-compatible.
#ifndef CAIRN_CLI_FORMAT_H_
#define CAIRN_CLI_FORMAT_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/formats/parameter_values.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/study.pb.h"
#include "cairn/v1/study_service.pb.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace cairn::cli {

// api::formats::ParameterKinds, api::formats::ParameterKindsOf and
// api::formats::ParameterValueToJson: see api/formats/parameter_values.h.

// The protobuf JSON mapping of any message, the one JSON shape of every
// `--json` output and of cairnd's REST API: lowerCamelCase field names, enums
// as names, int64 as strings, every field printed (zeros and empty strings
// too). Pretty-printed with two spaces, or on one line when !pretty. No
// trailing newline. Internal naming the value for what the mapping cannot
// hold (a Timestamp out of range, which only an older cairnd stored).
absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message, bool pretty = true);

// ProtoToJson(message) and a newline on `out`; its error (nothing written)
// otherwise, so that `--json` fails instead of printing something else.
absl::Status WriteJson(const google::protobuf::Message& message,
                       std::ostream& out);

// AI Platform's Job resource as `cairn jobs ... --json` prints it: its own
// shape (fields at their defaults left out, as AI Platform's REST API and
// gcloud print it), pretty-printed. Errors as ProtoToJson's.
absl::StatusOr<std::string> AiPlatformJson(
    const google::protobuf::Message& message);

// "x1=1.5 opt=adam units=64" (INTEGER values without a fraction).
std::string ParametersToText(const cairn::v1::Trial& trial,
                             const api::formats::ParameterKinds& kinds);

// "loss=0.25 acc=0.9" of a measurement's metrics.
std::string MetricsToText(const cairn::v1::Measurement& measurement);

// Left-aligned columns separated by two spaces; the header row first. Rows
// shorter than the header are padded with empty cells. Ends with '\n'.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// `cairn study list` table: NAME, DISPLAY NAME, STATE, TRIALS (finished /
// max_trials, or / all trials when unlimited), PENDING, FAILED.
std::string StudiesTable(const std::vector<cairn::v1::Study>& studies);

// `cairn trial list/suggest` table: ID, STATE, STEP, METRICS, PARAMETERS.
std::string TrialsTable(const std::vector<cairn::v1::Trial>& trials,
                        const api::formats::ParameterKinds& kinds);

// The trials table of `cairn jobs describe` for a tuning job: TRIAL, STATE,
// OBJECTIVE, STEP, HYPERPARAMETERS, NOTE. Objectives and fractional
// hyperparameters with 6 significant digits; the best objective first (per
// trainingInput.hyperparameters.goal, MAXIMIZE unless MINIMIZE), trials
// without one after it in id order. NOTE is "best" on the best SUCCEEDED
// trial and "stopped early: <reason>" on early-stopped ones, the reason
// from `early_stopping_reasons` (by trial id; "stopped early" alone when
// absent).
std::string JobTrialsTable(
    const cairn::v1::Job& job,
    const std::map<std::string, std::string>& early_stopping_reasons);

// The human view of one trial (`trial get`, `study best`): one "key: value"
// line per non-empty field, with its job's attempts, the exit code of an
// ended job and the early-stopping reason when there are.
std::string TrialToText(const cairn::v1::Trial& trial,
                        const api::formats::ParameterKinds& kinds);

// The one error line, without the "cairn: error: " prefix:
// "<CODE_NAME>: <message>" with newlines flattened to spaces.
std::string StatusToLine(const absl::Status& status);

// Trial id from the resource name when Trial.id is unset (0); 0 when the
// name is not studies/{id}/trials/{id} either.
int64_t TrialIdOf(const cairn::v1::Trial& trial);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_FORMAT_H_
