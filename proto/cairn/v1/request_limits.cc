// Input limits of the cairn.v1 API: an iterative walk over any message by
// reflection, applying the table of request_limit_rules.cc.
#include "proto/cairn/v1/request_limits.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "proto/cairn/v1/limits.h"
#include "proto/cairn/v1/quote.h"
#include "proto/cairn/v1/request_limit_rules.h"

namespace cairn {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using request_limits_internal::Charset;
using request_limits_internal::DescribeCharset;
using request_limits_internal::FieldRule;
using request_limits_internal::IntRange;

// Paths longer than this are shortened in errors, so every message stays
// under 1 KB (the rest of a message is at most about 350 bytes). The path of
// a conditional parameter nested one too deep (about 560) fits.
constexpr size_t kMaxPathInError = 600;

absl::Status Fail(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(ShortenForError(path, kMaxPathInError), ": ", what));
}

std::string Join(absl::string_view parent, absl::string_view name) {
  if (parent.empty()) return std::string(name);
  return absl::StrCat(parent, ".", name);
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

absl::Status CheckString(absl::string_view path, absl::string_view v,
                         int max_length, Charset charset) {
  if (v.size() > static_cast<size_t>(max_length)) {
    return Fail(path, absl::StrCat(v.size(),
                                   " characters, more than the limit "
                                   "of ",
                                   max_length, ": ", QuoteForError(v)));
  }
  if (v.empty()) return absl::OkStatus();
  if (!CharsetAllows(charset, v)) {
    return Fail(path,
                absl::StrCat(QuoteForError(v), " is not allowed: at most ",
                             max_length, " ", DescribeCharset(charset)));
  }
  if (charset == Charset::kParameterId && IsReservedParameterId(v)) {
    return Fail(path, absl::StrCat(QuoteForError(v),
                                   " is reserved: Cairn passes --job-dir to "
                                   "every training job; choose another id"));
  }
  return absl::OkStatus();
}

absl::Status CheckRange(absl::string_view path, int64_t v,
                        const IntRange& range) {
  if (v >= range.min && v <= range.max) return absl::OkStatus();
  return Fail(
      path,
      absl::StrCat(
          v, " is outside the limits [", range.min, ", ", range.max, "]",
          range.note == nullptr ? "" : absl::StrCat(" (", range.note, ")")));
}

// One message still to check.
struct Frame {
  const Message* message;
  std::string path;
  int depth;              // messages above it
  int conditional_depth;  // ConditionalParameterSpecs above it and itself
};

class Walker {
 public:
  absl::Status Run(const Message& root, absl::string_view path) {
    stack_.push_back({&root, std::string(path), 0, 0});
    while (!stack_.empty()) {
      Frame frame = std::move(stack_.back());
      stack_.pop_back();
      if (absl::Status s = Visit(frame); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  // Checks the message's own fields and queues its sub-messages (in reverse,
  // so that they are checked in field order).
  absl::Status Visit(const Frame& frame) {
    if (absl::Status s = CheckShape(frame); !s.ok()) return s;
    const Message& m = *frame.message;
    std::vector<const FieldDescriptor*> fields;
    m.GetReflection()->ListFields(m, &fields);
    std::vector<Frame> children;
    for (const FieldDescriptor* field : fields) {
      if (absl::Status s = VisitField(frame, *field, children); !s.ok()) {
        return s;
      }
    }
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      stack_.push_back(std::move(*it));
    }
    return absl::OkStatus();
  }

  // Depth, conditional nesting and the number of parameters.
  absl::Status CheckShape(const Frame& frame) {
    if (frame.depth > cairn::v1::kMaxMessageDepth) {
      return Fail(frame.path,
                  absl::StrCat("nested more than the limit of ",
                               cairn::v1::kMaxMessageDepth, " messages deep"));
    }
    if (frame.conditional_depth > cairn::v1::kMaxConditionalDepth) {
      return Fail(frame.path,
                  absl::StrCat("conditional parameters nest more than the "
                               "limit of ",
                               cairn::v1::kMaxConditionalDepth, " deep"));
    }
    if (frame.message->GetDescriptor()->full_name() ==
            "cairn.v1.ParameterSpec" &&
        ++parameter_specs_ > cairn::v1::kMaxParametersPerStudy) {
      return Fail(frame.path,
                  absl::StrCat("more than the limit of ",
                               cairn::v1::kMaxParametersPerStudy,
                               " parameters in one study (conditional ones "
                               "included)"));
    }
    return absl::OkStatus();
  }

  absl::Status VisitField(const Frame& frame, const FieldDescriptor& field,
                          std::vector<Frame>& children) {
    const std::string path = Join(frame.path, field.name());
    const FieldRule rule = request_limits_internal::RuleFor(field);
    const Message& m = *frame.message;
    const Reflection& r = *m.GetReflection();
    if (field.is_map()) return VisitMap(frame, field, rule, path, children);
    if (field.is_repeated()) {
      const int n = r.FieldSize(m, &field);
      if (n > rule.max_count) {
        return Fail(path, absl::StrCat(n, " entries, more than the limit of ",
                                       rule.max_count));
      }
      for (int i = 0; i < n; ++i) {
        const std::string item = absl::StrCat(path, "[", i, "]");
        if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          std::string scratch;
          if (absl::Status s = CheckString(
                  item, r.GetRepeatedStringReference(m, &field, i, &scratch),
                  rule.max_length, rule.charset);
              !s.ok()) {
            return s;
          }
        } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          children.push_back(
              Child(frame, r.GetRepeatedMessage(m, &field, i), item));
        }
      }
      return absl::OkStatus();
    }
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        return CheckString(path, r.GetStringReference(m, &field, &scratch),
                           rule.max_length, rule.charset);
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        children.push_back(Child(frame, r.GetMessage(m, &field), path));
        return absl::OkStatus();
      case FieldDescriptor::CPPTYPE_INT32:
      case FieldDescriptor::CPPTYPE_INT64:
        return CheckInt(m, field, path);
      default:
        return absl::OkStatus();
    }
  }

  absl::Status CheckInt(const Message& m, const FieldDescriptor& field,
                        const std::string& path) {
    std::optional<IntRange> range = request_limits_internal::RangeFor(field);
    if (!range.has_value()) return absl::OkStatus();
    const Reflection& r = *m.GetReflection();
    const int64_t v = field.cpp_type() == FieldDescriptor::CPPTYPE_INT32
                          ? r.GetInt32(m, &field)
                          : r.GetInt64(m, &field);
    return CheckRange(path, v, *range);
  }

  // A map<string, ...>: its size, its keys, and its values (strings checked
  // here, messages queued) at path "labels[\"key\"]".
  absl::Status VisitMap(const Frame& frame, const FieldDescriptor& field,
                        const FieldRule& rule, const std::string& path,
                        std::vector<Frame>& children) {
    const Message& m = *frame.message;
    const Reflection& r = *m.GetReflection();
    const int n = r.FieldSize(m, &field);
    if (n > rule.max_count) {
      return Fail(path, absl::StrCat(n, " entries, more than the limit of ",
                                     rule.max_count));
    }
    const FieldDescriptor* key_field = field.message_type()->map_key();
    const FieldDescriptor* value_field = field.message_type()->map_value();
    for (int i = 0; i < n; ++i) {
      const Message& entry = r.GetRepeatedMessage(m, &field, i);
      const Reflection& er = *entry.GetReflection();
      std::string key;
      if (key_field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        key = er.GetString(entry, key_field);
        if (absl::Status s = CheckString(absl::StrCat(path, " key"), key,
                                         rule.max_length, rule.charset);
            !s.ok()) {
          return s;
        }
      }
      const std::string item = absl::StrCat(path, "[", QuoteForError(key), "]");
      if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        if (absl::Status s =
                CheckString(item, er.GetString(entry, value_field),
                            rule.value_max_length, rule.value_charset);
            !s.ok()) {
          return s;
        }
      } else if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        children.push_back(
            Child(frame, er.GetMessage(entry, value_field), item));
      }
    }
    return absl::OkStatus();
  }

  static Frame Child(const Frame& parent, const Message& child,
                     std::string path) {
    const bool conditional = child.GetDescriptor()->full_name() ==
                             "cairn.v1.ConditionalParameterSpec";
    return {&child, std::move(path), parent.depth + 1,
            parent.conditional_depth + (conditional ? 1 : 0)};
  }

  std::vector<Frame> stack_;
  int parameter_specs_ = 0;
};

}  // namespace

absl::Status CheckRequestLimits(const google::protobuf::Message& message,
                                absl::string_view path) {
  return Walker().Run(message, path);
}

}  // namespace cairn
