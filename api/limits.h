// Limits of the cairn.v1 API that the server enforces and clients check
// before calling, kept in one place so both agree.
#ifndef CAIRN_API_LIMITS_H_
#define CAIRN_API_LIMITS_H_

#include "util/quote.h"

namespace cairn::api {

// SuggestTrialsRequest.suggestion_count must be in [1, kMaxSuggestionCount].
inline constexpr int kMaxSuggestionCount = 1000;

// GetTrial and ListTrials return at most the last kMaxTrialMeasurements
// measurements of a trial (Trial.measurements_truncated says more exist):
// 1,000 measurements of a few metrics stay far below gRPC's 4 MB.
inline constexpr int kMaxTrialMeasurements = 1000;

// A ListTrials page holds at most kMaxListTrialsBytes of trials (serialized
// size; always at least one trial), so that many trials with their
// measurements never exceed gRPC's 4 MB: the page then ends early, with
// fewer than page_size trials and a next_page_token to go on from.
inline constexpr int kMaxListTrialsBytes = 3 << 20;

// GetMetricHistoryRequest.page_size: 0 means kDefaultHistoryPageSize; at most
// kMaxHistoryPageSize, as is max_points. A point is at most 36 bytes on the
// wire, so a full page stays under gRPC's 4 MB.
inline constexpr int kDefaultHistoryPageSize = 10000;
inline constexpr int kMaxHistoryPageSize = 100000;

// ---------------------------------------------------------------- input limits
// Every string and repeated field of every request has a limit, checked by
// CheckRequestLimits (api/request_limits.h) before anything is
// stored; a field not named below gets the defaults at the end. README
// "Security / Input limits" has the same table.

// Parameter ids (ParameterSpec.parameter_id, Parameter.parameter_id): at most
// kMaxIdLength characters of [A-Za-z0-9_.-] starting with a letter or '_'
// (they become a training job's `--ID=VALUE` arguments); `job_dir` and
// `job-dir` (any case) are Cairn's own argument and refused.
// Metric ids (MetricSpec.metric_id, Metric.metric_id,
// GetMetricHistoryRequest.metric_id): the same, plus '/' (TensorBoard-style
// tags such as `val/loss`).
inline constexpr int kMaxIdLength = 128;

// Resource names ("studies/{id}/trials/{id}"), page tokens: at most
// kMaxResourceNameLength printable characters.
inline constexpr int kMaxResourceNameLength = 128;

// Study.display_name (and LookupStudyRequest.display_name): at most
// kMaxDisplayNameLength printable characters (no control characters), no '/'.
inline constexpr int kMaxDisplayNameLength = 256;

// Labels (StudySpec.labels, Trial.labels) and Trial.metadata: at most
// kMaxLabels entries; keys and label values at most kMaxLabelLength
// characters, metadata values at most kMaxFreeTextLength.
inline constexpr int kMaxLabels = 64;
inline constexpr int kMaxLabelLength = 256;

// Parameters of one study, conditional ones included (also the entries of
// Trial.parameters).
inline constexpr int kMaxParametersPerStudy = 1000;

// Conditional parameters nest at most this deep (a top-level parameter is at
// depth 0, its conditional children at depth 1, ...).
inline constexpr int kMaxConditionalDepth = 10;

// categorical_values, discrete_values and parent_*_values: at most
// kMaxParameterValues entries; a categorical value (and a trial's string
// parameter value) at most kMaxCategoricalValueLength printable characters.
inline constexpr int kMaxParameterValues = 1000;
inline constexpr int kMaxCategoricalValueLength = 256;

// Metrics in one Measurement, and MetricSpecs in one StudySpec (a final
// measurement carries every objective, so both have the same limit).
inline constexpr int kMaxMetrics = 100;

// SuggestTrialsRequest.client_id: at most kMaxClientIdLength printable
// characters.
inline constexpr int kMaxClientIdLength = 256;

// ListStudiesRequest.page_size: 0 (means 100) to kMaxListStudiesPageSize;
// ListTrialsRequest.page_size: 0 (means 1000) to kMaxListTrialsPageSize.
inline constexpr int kMaxListStudiesPageSize = 1000;
inline constexpr int kMaxListTrialsPageSize = 10000;

// ReadTrialLogsRequest: offset >= 0; max_bytes 0 (means 1 MiB) to
// kMaxReadLogBytes.
inline constexpr int kMaxReadLogBytes = 1 << 20;

// TrialJobTemplate: at most kMaxCommandArgs command entries and kMaxEnvVars
// env entries; each argument, env value and job_dir at most kMaxPathLength
// characters, env names at most kMaxLabelLength. (What env and job_dir may
// name is checked by the job sandbox, not here.)
inline constexpr int kMaxCommandArgs = 1024;
inline constexpr int kMaxEnvVars = 256;
inline constexpr int kMaxPathLength = 4096;

// A training package (cairn.v1.SubmitTrainingJobRequest.package_files): at
// most kMaxPackageFiles files of at most kMaxPackageFileBytes each (and the
// whole request within cairnd's 64 MiB message limit).
inline constexpr int kMaxPackageFiles = 10000;
inline constexpr int kMaxPackageFileBytes = 32 << 20;

// Any other string (infeasible_reason, metadata values, ...): at most
// kMaxFreeTextLength characters; any other repeated field: at most
// kMaxRepeated entries; messages nest at most kMaxMessageDepth deep (this
// bounds google.protobuf.Value lists and structs).
inline constexpr int kMaxFreeTextLength = 4096;
inline constexpr int kMaxRepeated = 1000;
inline constexpr int kMaxMessageDepth = 32;

// An error echoes at most kMaxEchoedValueLength characters of a value
// (util::QuoteForError); every error stays under 1 KB.
inline constexpr int kMaxEchoedValueLength = util::kMaxQuotedBytes;

}  // namespace cairn::api

#endif  // CAIRN_API_LIMITS_H_
