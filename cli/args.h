// Parsing of CLI arguments that are not plain flags: metric assignments
// (name=value), study references and trial references.
// All functions are pure and thread-compatible.
#ifndef CAIRN_CLI_ARGS_H_
#define CAIRN_CLI_ARGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/study.pb.h"

namespace cairn::cli {

// Parses "name=value" into a Metric. The name is everything before the first
// '=' and must be non-empty; the value must be a finite decimal number (e.g.
// "loss=0.25", "acc=1e-3"). InvalidArgument naming the token otherwise.
absl::StatusOr<cairn::v1::Metric> ParseMetricAssignment(
    absl::string_view token);

// Parses every token with ParseMetricAssignment; a metric named twice is
// InvalidArgument.
absl::StatusOr<std::vector<cairn::v1::Metric>> ParseMetricAssignments(
    const std::vector<std::string>& tokens);

// A study as given on the command line. Exactly one field is set: `name`
// ("studies/N") when the argument was "studies/N" or a bare number N, or
// `display_name` when it must be resolved with LookupStudy.
struct StudyRef {
  std::string name;
  std::string display_name;
};

// Classifies a STUDY argument. A bare number is a study id even if some study
// has that number as its display name. InvalidArgument for an empty argument
// or a malformed "studies/..." name.
absl::StatusOr<StudyRef> ParseStudyRef(absl::string_view arg);

// Builds the trial resource name "studies/N/trials/M" from the resolved study
// name and a TRIAL argument ("M" or "studies/N/trials/M"). A full trial name
// of another study is InvalidArgument.
absl::StatusOr<std::string> TrialName(absl::string_view study_name,
                                      absl::string_view arg);

// Checks a --server value: HOST:PORT (HOST a name, IPv4 or [IPv6] address,
// PORT 1-65535), or a gRPC target with a scheme ("unix:PATH", "dns:...").
// InvalidArgument naming --server and the value otherwise, e.g. for
// "localhost" without a port.
absl::Status CheckServerAddress(absl::string_view server);

// True if `s` is a non-empty string of ASCII digits.
bool IsDigits(absl::string_view s);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_ARGS_H_
