// Input limits of the cairn.v1 API: an iterative walk over any message by
// reflection, applying the table of request_limit_rules.cc.
#include "api/request_limits.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/limits.h"
#include "api/request_limit_rules.h"
#include "cairn/v1/study.pb.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/time_util.h"
#include "util/quote.h"

namespace cairn::api {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using request_limits_internal::Charset;
using request_limits_internal::DescribeCharset;
using request_limits_internal::FieldRule;

// Paths longer than this are shortened in errors, so every message stays
// under 1 KB (the rest of a message is at most about 350 bytes). The path of
// a conditional parameter nested one too deep (about 560) fits.
constexpr size_t kMaxPathInError = 600;

absl::Status Fail(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(util::ShortenForError(path, kMaxPathInError), ": ", what));
}

bool IsControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool IsIdChar(char c, bool metric) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         c == '.' || c == '-' || (metric && c == '/');
}

// Whether `v` (non-empty) uses only the characters of `charset`.
bool CharsetAllows(Charset charset, absl::string_view v) {
  switch (charset) {
    case Charset::kAny:
      return true;
    case Charset::kPrintable:
    case Charset::kDisplayName:
      for (char c : v) {
        if (IsControl(c) || (charset == Charset::kDisplayName && c == '/')) {
          return false;
        }
      }
      return true;
    case Charset::kParameterId:
    case Charset::kMetricId: {
      const bool metric = charset == Charset::kMetricId;
      if (!absl::ascii_isalpha(static_cast<unsigned char>(v[0])) &&
          v[0] != '_') {
        return false;
      }
      for (char c : v) {
        if (!IsIdChar(c, metric)) return false;
      }
      return true;
    }
  }
  return false;
}

// job_dir, job-dir, JOB_DIR...: Cairn passes --job-dir to every job.
bool IsReservedParameterId(absl::string_view v) {
  return absl::AsciiStrToLower(absl::StrReplaceAll(v, {{"-", "_"}})) ==
         "job_dir";
}

// What is wrong with string `v`, or "" if nothing.
std::string StringProblem(absl::string_view v, int max_length,
                          Charset charset) {
  if (v.size() > static_cast<size_t>(max_length)) {
    return absl::StrCat(v.size(), " characters, more than the limit of ",
                        max_length, ": ", util::QuoteForError(v));
  }
  if (v.empty()) return "";
  if (!CharsetAllows(charset, v)) {
    return absl::StrCat(util::QuoteForError(v), " is not allowed: at most ",
                        max_length, " ", DescribeCharset(charset));
  }
  if (charset == Charset::kParameterId && IsReservedParameterId(v)) {
    return absl::StrCat(util::QuoteForError(v),
                        " is reserved: Cairn passes --job-dir to every "
                        "training job; choose another id");
  }
  return "";
}

// What is wrong with a Duration or Timestamp (the ranges their definitions
// in google/protobuf/*.proto give, outside which the JSON mapping cannot
// print them), or "" if nothing or `m` is neither.
std::string TimeProblem(const Message& m) {
  using google::protobuf::util::TimeUtil;
  if (const auto* d =
          google::protobuf::DynamicCastToGenerated<google::protobuf::Duration>(
              &m)) {
    const bool mixed_signs = (d->seconds() < 0 && d->nanos() > 0) ||
                             (d->seconds() > 0 && d->nanos() < 0);
    if (d->seconds() < TimeUtil::kDurationMinSeconds ||
        d->seconds() > TimeUtil::kDurationMaxSeconds ||
        d->nanos() < -999999999 || d->nanos() > 999999999 || mixed_signs) {
      return absl::StrCat("seconds ", d->seconds(), ", nanos ", d->nanos(),
                          " is not a valid duration (seconds within +-",
                          TimeUtil::kDurationMaxSeconds,
                          ", nanos within +-999999999 and of the same sign)");
    }
  } else if (const auto* t = google::protobuf::DynamicCastToGenerated<
                 google::protobuf::Timestamp>(&m)) {
    if (t->seconds() < TimeUtil::kTimestampMinSeconds ||
        t->seconds() > TimeUtil::kTimestampMaxSeconds || t->nanos() < 0 ||
        t->nanos() > 999999999) {
      return absl::StrCat("seconds ", t->seconds(), ", nanos ", t->nanos(),
                          " is not a valid timestamp (years 1 to 9999, "
                          "nanos 0 to 999999999)");
    }
  }
  return "";
}

std::string CountProblem(int n, int max_count) {
  if (n <= max_count) return "";
  return absl::StrCat(n, " entries, more than the limit of ", max_count);
}

// One step of a path: a field, an index into it, or a map key. Paths are
// spelled out only for an error, so a request that passes builds no strings.
struct PathNode {
  int parent;  // -1 for the root
  const FieldDescriptor* field;
  int index;        // -1: none
  std::string key;  // a map entry's key (with index -2)
};

// One message still to check.
struct Frame {
  const Message* message;
  int node;               // its path, in Walker::nodes_
  int depth;              // messages above it
  int conditional_depth;  // ConditionalParameterSpecs above it and itself
};

class Walker {
 public:
  absl::Status Run(const Message& root, absl::string_view path) {
    root_ = std::string(path);
    stack_.push_back({&root, -1, 0, 0});
    while (!stack_.empty()) {
      Frame frame = stack_.back();
      stack_.pop_back();
      if (absl::Status s = Visit(frame); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  // The path of `node`, then `field`, `[index]` (index >= 0) or `[key]`
  // (index -2), or ` key` (index -3: a map's key itself).
  std::string PathOf(int node, const FieldDescriptor* field = nullptr,
                     int index = -1, absl::string_view key = "") const {
    std::vector<const PathNode*> chain;
    for (int n = node; n >= 0; n = nodes_[n].parent)
      chain.push_back(&nodes_[n]);
    std::string path = root_;
    auto append = [&path](const FieldDescriptor* f, int i,
                          absl::string_view k) {
      if (f != nullptr) {
        if (!path.empty()) path += '.';
        path += f->name();
      }
      if (i >= 0) absl::StrAppend(&path, "[", i, "]");
      if (i == -2) absl::StrAppend(&path, "[", util::QuoteForError(k), "]");
      if (i == -3) path += " key";
    };
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      append((*it)->field, (*it)->index, (*it)->key);
    }
    append(field, index, key);
    return path;
  }

  // Checks the message's own fields and queues its sub-messages (in reverse,
  // so that they are checked in field order).
  absl::Status Visit(const Frame& frame) {
    if (absl::Status s = CheckShape(frame); !s.ok()) return s;
    const Message& m = *frame.message;
    fields_.clear();
    m.GetReflection()->ListFields(m, &fields_);
    const size_t first_child = children_.size();
    // VisitField never comes back here, so fields_ stays as it is.
    for (const FieldDescriptor* field : fields_) {
      if (absl::Status s = VisitField(frame, *field); !s.ok()) return s;
    }
    for (size_t i = children_.size(); i > first_child; --i) {
      stack_.push_back(children_[i - 1]);
    }
    children_.resize(first_child);
    return absl::OkStatus();
  }

  // Depth, conditional nesting, the number of parameters, and the ranges of
  // durations and timestamps.
  absl::Status CheckShape(const Frame& frame) {
    if (frame.depth > cairn::api::kMaxMessageDepth) {
      return Fail(PathOf(frame.node),
                  absl::StrCat("nested more than the limit of ",
                               cairn::api::kMaxMessageDepth, " messages deep"));
    }
    if (frame.conditional_depth > cairn::api::kMaxConditionalDepth) {
      return Fail(PathOf(frame.node),
                  absl::StrCat("conditional parameters nest more than the "
                               "limit of ",
                               cairn::api::kMaxConditionalDepth, " deep"));
    }
    if (frame.message->GetDescriptor() ==
            cairn::v1::ParameterSpec::descriptor() &&
        ++parameter_specs_ > cairn::api::kMaxParametersPerStudy) {
      return Fail(PathOf(frame.node),
                  absl::StrCat("more than the limit of ",
                               cairn::api::kMaxParametersPerStudy,
                               " parameters in one study (conditional ones "
                               "included)"));
    }
    if (std::string what = TimeProblem(*frame.message); !what.empty()) {
      return Fail(PathOf(frame.node), what);
    }
    return absl::OkStatus();
  }

  absl::Status VisitField(const Frame& frame, const FieldDescriptor& field) {
    const FieldRule& rule = request_limits_internal::RuleFor(field);
    const Message& m = *frame.message;
    const Reflection& r = *m.GetReflection();
    if (field.is_map()) return VisitMap(frame, field, rule);
    if (field.is_repeated()) {
      const int n = r.FieldSize(m, &field);
      if (std::string what = CountProblem(n, rule.max_count); !what.empty()) {
        return Fail(PathOf(frame.node, &field), what);
      }
      for (int i = 0; i < n; ++i) {
        if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          std::string scratch;
          if (std::string what = StringProblem(
                  r.GetRepeatedStringReference(m, &field, i, &scratch),
                  rule.max_length, rule.charset);
              !what.empty()) {
            return Fail(PathOf(frame.node, &field, i), what);
          }
        } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          AddChild(frame, r.GetRepeatedMessage(m, &field, i), &field, i, "");
        }
      }
      return absl::OkStatus();
    }
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        std::string what =
            StringProblem(r.GetStringReference(m, &field, &scratch),
                          rule.max_length, rule.charset);
        if (what.empty()) return absl::OkStatus();
        return Fail(PathOf(frame.node, &field), what);
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        AddChild(frame, r.GetMessage(m, &field), &field, -1, "");
        return absl::OkStatus();
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
        return CheckInt(frame, field);
      default:
        return absl::OkStatus();
    }
  }

  absl::Status CheckInt(const Frame& frame, const FieldDescriptor& field) {
    const request_limits_internal::IntRange* range =
        request_limits_internal::RangeFor(field);
    if (range == nullptr) return absl::OkStatus();
    const Message& m = *frame.message;
    const Reflection& r = *m.GetReflection();
    const int64_t v = field.cpp_type() == FieldDescriptor::CPPTYPE_INT32
                          ? r.GetInt32(m, &field)
                          : r.GetInt64(m, &field);
    if (v >= range->min && v <= range->max) return absl::OkStatus();
    return Fail(PathOf(frame.node, &field),
                absl::StrCat(v, " is outside the limits [", range->min, ", ",
                             range->max, "]",
                             range->note == nullptr
                                 ? ""
                                 : absl::StrCat(" (", range->note, ")")));
  }

  // A map<string, ...>: its size, its keys, and its values (strings checked
  // here, messages queued) at path `labels["key"]`.
  absl::Status VisitMap(const Frame& frame, const FieldDescriptor& field,
                        const FieldRule& rule) {
    const Message& m = *frame.message;
    const Reflection& r = *m.GetReflection();
    const int n = r.FieldSize(m, &field);
    if (std::string what = CountProblem(n, rule.max_count); !what.empty()) {
      return Fail(PathOf(frame.node, &field), what);
    }
    const FieldDescriptor* key_field = field.message_type()->map_key();
    const FieldDescriptor* value_field = field.message_type()->map_value();
    for (int i = 0; i < n; ++i) {
      const Message& entry = r.GetRepeatedMessage(m, &field, i);
      const Reflection& er = *entry.GetReflection();
      std::string key;
      if (key_field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        key = er.GetString(entry, key_field);
        if (std::string what =
                StringProblem(key, rule.max_length, rule.charset);
            !what.empty()) {
          return Fail(PathOf(frame.node, &field, -3), what);
        }
      }
      if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        std::string scratch;
        if (std::string what = StringProblem(
                er.GetStringReference(entry, value_field, &scratch),
                rule.value_max_length, rule.value_charset);
            !what.empty()) {
          return Fail(PathOf(frame.node, &field, -2, key), what);
        }
      } else if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        AddChild(frame, er.GetMessage(entry, value_field), &field, -2, key);
      }
    }
    return absl::OkStatus();
  }

  void AddChild(const Frame& parent, const Message& child,
                const FieldDescriptor* field, int index, std::string key) {
    nodes_.push_back({parent.node, field, index, std::move(key)});
    const bool conditional = child.GetDescriptor() ==
                             cairn::v1::ConditionalParameterSpec::descriptor();
    children_.push_back({&child, static_cast<int>(nodes_.size()) - 1,
                         parent.depth + 1,
                         parent.conditional_depth + (conditional ? 1 : 0)});
  }

  std::string root_;
  std::vector<PathNode> nodes_;
  std::vector<Frame> stack_;
  std::vector<Frame> children_;
  std::vector<const FieldDescriptor*> fields_;
  int parameter_specs_ = 0;
};

// Whether CheckRequestLimits would pass `m`: the walker's tests on a
// Measurement's fields (the same rules and helpers), without reflection.
bool MeasurementWithinLimits(const cairn::v1::Measurement& m) {
  using request_limits_internal::RangeFor;
  using request_limits_internal::RuleFor;
  static const FieldDescriptor& step =
      *cairn::v1::Measurement::descriptor()->FindFieldByName("step_count");
  static const FieldDescriptor& metrics =
      *cairn::v1::Measurement::descriptor()->FindFieldByName("metrics");
  static const FieldDescriptor& metric_id =
      *cairn::v1::Metric::descriptor()->FindFieldByName("metric_id");
  if (const auto* range = RangeFor(step);
      range != nullptr &&
      (m.step_count() < range->min || m.step_count() > range->max)) {
    return false;
  }
  if (!CountProblem(m.metrics_size(), RuleFor(metrics).max_count).empty()) {
    return false;
  }
  if (m.has_elapsed_duration() && !TimeProblem(m.elapsed_duration()).empty()) {
    return false;
  }
  const FieldRule& id = RuleFor(metric_id);
  for (const cairn::v1::Metric& metric : m.metrics()) {
    if (!StringProblem(metric.metric_id(), id.max_length, id.charset).empty()) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status CheckMeasurementLimits(const cairn::v1::Measurement& measurement,
                                    absl::string_view path) {
  if (MeasurementWithinLimits(measurement)) return absl::OkStatus();
  return CheckRequestLimits(measurement, path);  // The walker's own message.
}

absl::Status CheckRequestLimits(const google::protobuf::Message& message,
                                absl::string_view path) {
  return Walker().Run(message, path);
}

}  // namespace cairn::api
