// The table of input limits: see request_limit_rules.h.
#include "api/request_limit_rules.h"

#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "api/limits.h"
#include "cairn/v1/admin_service.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"
#include "cairn/v1/study_service.pb.h"
#include "google/protobuf/struct.pb.h"

namespace cairn::api::request_limits_internal {
namespace {

using namespace cairn::api;  // NOLINT: the limits, many of them.
using namespace cairn::v1;   // NOLINT: the messages the rules name.

constexpr FieldRule Str(int max_length, Charset charset = Charset::kAny) {
  FieldRule r;
  r.max_length = max_length;
  r.charset = charset;
  return r;
}

constexpr FieldRule Count(int max_count, int max_length = kMaxFreeTextLength,
                          Charset charset = Charset::kAny) {
  FieldRule r = Str(max_length, charset);
  r.max_count = max_count;
  return r;
}

constexpr FieldRule Map(int max_entries, int key_length, int value_length) {
  FieldRule r = Count(max_entries, key_length, Charset::kPrintable);
  r.value_max_length = value_length;
  return r;
}

using RuleTable = absl::flat_hash_map<std::string, FieldRule>;

void AddIdRules(RuleTable& t) {
  const FieldRule param = Str(kMaxIdLength, Charset::kParameterId);
  const FieldRule metric = Str(kMaxIdLength, Charset::kMetricId);
  t["cairn.v1.ParameterSpec.parameter_id"] = param;
  t["cairn.v1.Parameter.parameter_id"] = param;
  t["cairn.v1.MetricSpec.metric_id"] = metric;
  t["cairn.v1.Metric.metric_id"] = metric;
  t["cairn.v1.GetMetricHistoryRequest.metric_id"] = metric;
  const FieldRule display = Str(kMaxDisplayNameLength, Charset::kDisplayName);
  t["cairn.v1.Study.display_name"] = display;
  t["cairn.v1.LookupStudyRequest.display_name"] = display;
  const FieldRule client = Str(kMaxClientIdLength, Charset::kPrintable);
  t["cairn.v1.SuggestTrialsRequest.client_id"] = client;
  t["cairn.v1.Trial.client_id"] = client;
}

void AddSpecRules(RuleTable& t) {
  t["cairn.v1.StudySpec.parameters"] = Count(kMaxParametersPerStudy);
  t["cairn.v1.ParameterSpec.conditional_parameter_specs"] =
      Count(kMaxParametersPerStudy);
  const FieldRule categorical = Count(
      kMaxParameterValues, kMaxCategoricalValueLength, Charset::kPrintable);
  t["cairn.v1.ParameterSpec.categorical_values"] = categorical;
  t["cairn.v1.ConditionalParameterSpec.parent_categorical_values"] =
      categorical;
  t["cairn.v1.ParameterSpec.discrete_values"] = Count(kMaxParameterValues);
  t["cairn.v1.ConditionalParameterSpec.parent_int_values"] =
      Count(kMaxParameterValues);
  t["cairn.v1.ConditionalParameterSpec.parent_discrete_values"] =
      Count(kMaxParameterValues);
  t["cairn.v1.StudySpec.metrics"] = Count(kMaxMetrics);
  t["cairn.v1.StudySpec.labels"] =
      Map(kMaxLabels, kMaxLabelLength, kMaxLabelLength);
  t["cairn.v1.UpdateStudyLabelsRequest.labels"] =
      Map(kMaxLabels, kMaxLabelLength, kMaxLabelLength);
  t["cairn.v1.UpdateStudyLabelsRequest.remove_keys"] =
      Count(kMaxLabels, kMaxLabelLength, Charset::kPrintable);
  t["cairn.v1.TrialJobTemplate.command"] =
      Count(kMaxCommandArgs, kMaxPathLength);
  t["cairn.v1.TrialJobTemplate.env"] =
      Map(kMaxEnvVars, kMaxLabelLength, kMaxPathLength);
  t["cairn.v1.TrialJobTemplate.job_dir"] = Str(kMaxPathLength);
  t["cairn.v1.BackupRequest.destination"] = Str(kMaxPathLength);
}

// AI Platform jobs (job_service.proto): the package is the only large field.
void AddJobRules(RuleTable& t) {
  const FieldRule job_id = Str(kMaxIdLength, Charset::kPrintable);
  for (const char* f : {"cairn.v1.Job.job_id", "cairn.v1.GetJobRequest.job_id",
                        "cairn.v1.CancelJobRequest.job_id",
                        "cairn.v1.ReadJobLogsRequest.job_id",
                        "cairn.v1.HyperparameterSpec.resume_previous_job_id"}) {
    t[f] = job_id;
  }
  t["cairn.v1.Job.labels"] = Map(kMaxLabels, kMaxLabelLength, kMaxLabelLength);
  t["cairn.v1.SubmitTrainingJobRequest.package_files"] =
      Count(kMaxPackageFiles);
  t["cairn.v1.PackageFile.path"] = Str(kMaxPathLength, Charset::kPrintable);
  t["cairn.v1.PackageFile.content"] = Str(kMaxPackageFileBytes);
  t["cairn.v1.TrainingInput.args"] = Count(kMaxCommandArgs, kMaxPathLength);
  t["cairn.v1.TrainingInput.job_dir"] = Str(kMaxPathLength);
  t["cairn.v1.TrainingInput.python_module"] =
      Str(kMaxIdLength, Charset::kPrintable);
  t["cairn.v1.HyperparameterSpec.params"] = Count(kMaxParametersPerStudy);
  t["cairn.v1.ParameterSpecAip.categorical_values"] = Count(
      kMaxParameterValues, kMaxCategoricalValueLength, Charset::kPrintable);
  t["cairn.v1.ParameterSpecAip.discrete_values"] = Count(kMaxParameterValues);
}

void AddTrialRules(RuleTable& t) {
  t["cairn.v1.Trial.parameters"] = Count(kMaxParametersPerStudy);
  t["cairn.v1.Trial.measurements"] = Count(kMaxTrialMeasurements);
  t["cairn.v1.Measurement.metrics"] = Count(kMaxMetrics);
  t["cairn.v1.Trial.labels"] =
      Map(kMaxLabels, kMaxLabelLength, kMaxLabelLength);
  t["cairn.v1.Trial.metadata"] =
      Map(kMaxLabels, kMaxLabelLength, kMaxFreeTextLength);
  // A trial's CATEGORICAL value is a google.protobuf.Value's string_value.
  t["google.protobuf.Value.string_value"] =
      Str(kMaxCategoricalValueLength, Charset::kPrintable);
}

const RuleTable& Rules() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable;
    AddIdRules(*t);
    AddSpecRules(*t);
    AddJobRules(*t);
    AddTrialRules(*t);
    return t;
  }();
  return *table;
}

using RangeTable = absl::flat_hash_map<std::string, IntRange>;

const RangeTable& Ranges() {
  static const RangeTable* table = new RangeTable{
      {"cairn.v1.SuggestTrialsRequest.suggestion_count",
       {0, kMaxSuggestionCount, "0 means 1"}},
      {"cairn.v1.ListStudiesRequest.page_size",
       {0, kMaxListStudiesPageSize, "0 means 100"}},
      {"cairn.v1.ListTrialsRequest.page_size",
       {0, kMaxListTrialsPageSize, "0 means 1000"}},
      {"cairn.v1.GetMetricHistoryRequest.page_size",
       {0, kMaxHistoryPageSize, "0 means 10000"}},
      {"cairn.v1.GetMetricHistoryRequest.max_points",
       {0, kMaxHistoryPageSize, "0 means every point"}},
      {"cairn.v1.ReadTrialLogsRequest.max_bytes",
       {0, kMaxReadLogBytes, "0 means 1 MiB"}},
      {"cairn.v1.ReadTrialLogsRequest.offset",
       {0, std::numeric_limits<int64_t>::max(), nullptr}},
      {"cairn.v1.ListJobsRequest.page_size",
       {0, std::numeric_limits<int32_t>::max(), "0 means every job"}},
      {"cairn.v1.ReadJobLogsRequest.max_bytes",
       {0, kMaxReadLogBytes, "0 means 1 MiB"}},
      {"cairn.v1.ReadJobLogsRequest.offset",
       {0, std::numeric_limits<int64_t>::max(), nullptr}},
  };
  return *table;
}

// The rule of `field` by name: its own entry, else the rule of the fields
// named name/parent/trial_name/page_token in cairn.v1, else the defaults.
FieldRule RuleByName(const google::protobuf::FieldDescriptor& field) {
  const RuleTable& rules = Rules();
  if (auto it = rules.find(field.full_name()); it != rules.end()) {
    return it->second;
  }
  if (field.file()->package() == "cairn.v1" &&
      (field.name() == "name" || field.name() == "parent" ||
       field.name() == "trial_name" || field.name() == "page_token")) {
    return Str(kMaxResourceNameLength, Charset::kPrintable);
  }
  return FieldRule();
}

// Rules and ranges by descriptor, resolved once for every field of the
// generated cairn.v1 messages and google.protobuf.Value: a lookup per field
// is then one pointer hash, not a string hash of the field's full name.
struct ByField {
  absl::flat_hash_map<const google::protobuf::FieldDescriptor*, FieldRule>
      rules;
  absl::flat_hash_map<const google::protobuf::FieldDescriptor*, IntRange>
      ranges;
};

void AddMessage(const google::protobuf::Descriptor& d, ByField& out) {
  for (int i = 0; i < d.nested_type_count(); ++i) {
    AddMessage(*d.nested_type(i), out);  // map entries are nested types
  }
  for (int i = 0; i < d.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d.field(i);
    out.rules[f] = RuleByName(*f);
    if (auto it = Ranges().find(f->full_name()); it != Ranges().end()) {
      out.ranges[f] = it->second;
    }
  }
}

const ByField& Resolved() {
  static const ByField* by_field = [] {
    auto* out = new ByField;
    for (const google::protobuf::FileDescriptor* file :
         {cairn::v1::Study::descriptor()->file(),
          cairn::v1::CreateStudyRequest::descriptor()->file(),
          cairn::v1::BackupRequest::descriptor()->file(),
          cairn::v1::Job::descriptor()->file(),
          cairn::v1::SubmitTrainingJobRequest::descriptor()->file(),
          google::protobuf::Value::descriptor()->file()}) {
      for (int i = 0; i < file->message_type_count(); ++i) {
        AddMessage(*file->message_type(i), *out);
      }
    }
    return out;
  }();
  return *by_field;
}

}  // namespace

const FieldRule& RuleFor(const google::protobuf::FieldDescriptor& field) {
  static const FieldRule kDefault;
  const ByField& resolved = Resolved();
  auto it = resolved.rules.find(&field);
  return it == resolved.rules.end() ? kDefault : it->second;
}

const IntRange* RangeFor(const google::protobuf::FieldDescriptor& field) {
  const ByField& resolved = Resolved();
  auto it = resolved.ranges.find(&field);
  return it == resolved.ranges.end() ? nullptr : &it->second;
}

const char* DescribeCharset(Charset charset) {
  switch (charset) {
    case Charset::kAny:
      return "any characters";
    case Charset::kPrintable:
      return "printable characters (no control characters)";
    case Charset::kDisplayName:
      return "printable characters (no control characters) without '/'";
    case Charset::kParameterId:
      return "characters of [A-Za-z0-9_.-], starting with a letter or '_'";
    case Charset::kMetricId:
      return "characters of [A-Za-z0-9_./-], starting with a letter or '_'";
  }
  return "";
}

}  // namespace cairn::api::request_limits_internal
