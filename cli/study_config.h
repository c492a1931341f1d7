// Study config files: YAML or JSON whose fields are the protobuf JSON mapping
// of cairn.v1.StudySpec. YAML is converted to JSON generically (no per-field
// code) and then parsed by protobuf's JSON parser, so the proto stays the one
// schema.
#ifndef CAIRN_CLI_STUDY_CONFIG_H_
#define CAIRN_CLI_STUDY_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"

namespace cairn::cli {

// Parses StudySpec from JSON text in the protobuf JSON mapping (proto field
// names or lowerCamelCase, enums as strings). Unknown fields and bad values
// are InvalidArgument naming the field path. job_template.image (with
// job_template.command run inside it) is shorthand for job_template.container
// {image, command}.
absl::StatusOr<cairn::v1::StudySpec> StudySpecFromJson(const std::string& json);

// Parses StudySpec from YAML text (JSON is valid YAML too):
// util/yaml/yaml_json.h's util::yaml::YamlToJson (plain scalars typed, aliases
// bounded), then StudySpecFromJson. The top level must be a mapping.
absl::StatusOr<cairn::v1::StudySpec> StudySpecFromYaml(const std::string& yaml);

// Makes the relative file paths of spec.job_template.command absolute
// against `config_dir` (the study config's own directory; "" is the working
// directory), so a config means the same from any working directory and
// cairnd gets absolute paths. An element is left alone when it is absolute,
// starts with '-' (a flag) or names no file there and has no '/' (a
// program found on PATH, such as python3). InvalidArgument naming
// job_template.command[i] for a relative path with a '/' that names no
// file there.
absl::Status ResolveCommandPaths(const std::string& config_dir,
                                 cairn::v1::StudySpec& spec);

// Reads `path` and parses it: files ending in ".json" with the JSON parser,
// anything else as YAML; then ResolveCommandPaths against the file's
// directory. Every error message starts with "<path>: ". NotFound if the
// file cannot be read.
absl::StatusOr<cairn::v1::StudySpec> LoadStudySpecFile(const std::string& path);

// The default display name for a config file: its file name without
// directories and the last extension ("examples/studies/branin.yaml" ->
// "branin").
std::string DisplayNameFromPath(const std::string& path);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_STUDY_CONFIG_H_
