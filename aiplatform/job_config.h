// AI Platform job config files (gcloud's --config): a whole Job resource in
// YAML or JSON (jobId, labels, trainingInput), read through the protobuf JSON
// mapping of cairn.v1.Job (proto/cairn/v1/aiplatform.proto): the YAML is
// converted to JSON generically and parsed by protobuf, so the proto stays
// the one schema. Lenient as real configs need: numbers may be written as
// plain YAML numbers or strings, enum values in any case ("integer"),
// booleans as TRUE/True/true.
#ifndef CAIRN_AIPLATFORM_JOB_CONFIG_H_
#define CAIRN_AIPLATFORM_JOB_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/aiplatform.pb.h"

namespace cairn::aiplatform {

struct JobConfig {
  cairn::v1::Job job;
  // Fields that are set but mean nothing on one machine, as config paths
  // ("trainingInput.region"), in field order: the caller reports them once.
  std::vector<std::string> ignored_fields;
};

// Parses a config's text (YAML; JSON is YAML too). Output-only fields of the
// Job (state, trainingOutput, times, etag) are cleared. InvalidArgument for
// bad YAML (with its line), an unknown field (naming it, e.g.
// "trainingInput.hyperparameters.foo"), or a bad value.
absl::StatusOr<JobConfig> ParseJobConfig(const std::string& text);

// Reads and parses the file at `path`; errors start with "<path>: ".
absl::StatusOr<JobConfig> LoadJobConfigFile(const std::string& path);

// The set fields of `input` that have no meaning on one machine (region,
// runtimeVersion, pythonVersion, machine type names, ...), and packageUris
// (which cairnd reads only when the client sends no package files).
std::vector<std::string> IgnoredFields(const cairn::v1::TrainingInput& input);

// The Job's trainingInput as JSON in AI Platform's field names ("{}" when
// empty): TF_CONFIG's "job" value.
std::string TrainingInputJson(const cairn::v1::TrainingInput& input);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_CONFIG_H_
