// Internal to request_limits.cc: which limit applies to which field, one
// table for the whole API (values from api/limits.h).
#ifndef CAIRN_API_REQUEST_LIMIT_RULES_H_
#define CAIRN_API_REQUEST_LIMIT_RULES_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "api/limits.h"
#include "google/protobuf/descriptor.h"

namespace cairn::api::request_limits_internal {

// What characters a string may hold (checked only when it is non-empty:
// whether a field may be empty is for the component's own validation).
enum class Charset {
  kAny,          // anything protobuf accepts
  kPrintable,    // no control characters (bytes below 0x20, 0x7f)
  kDisplayName,  // kPrintable and no '/'
  kParameterId,  // [A-Za-z_][A-Za-z0-9_.-]*, not job_dir / job-dir
  kMetricId,     // [A-Za-z_][A-Za-z0-9_./-]*
};

// The limits of one field. For a map, max_length and charset apply to its
// keys and value_max_length to its string values.
struct FieldRule {
  int max_length = cairn::api::kMaxFreeTextLength;
  Charset charset = Charset::kAny;
  int max_count = cairn::api::kMaxRepeated;
  int value_max_length = cairn::api::kMaxFreeTextLength;
  Charset value_charset = Charset::kAny;
};

// An inclusive range for an integer field, with a note on its 0 ("0 means
// 100"), or nullptr.
struct IntRange {
  int64_t min = 0;
  int64_t max = 0;
  const char* note = nullptr;
};

// The rule of `field`: its own entry in the table, else the rule of fields
// with its name in cairn.v1 (name, parent, trial_name, page_token), else the
// defaults. Fields of the generated descriptors are resolved once; a field of
// another descriptor pool gets the defaults.
const FieldRule& RuleFor(const google::protobuf::FieldDescriptor& field);

// The range of an integer field, or nullptr if it has none.
const IntRange* RangeFor(const google::protobuf::FieldDescriptor& field);

// "at most 128 characters of [A-Za-z0-9_.-], starting with a letter or '_'",
// for errors.
const char* DescribeCharset(Charset charset);

}  // namespace cairn::api::request_limits_internal

#endif  // CAIRN_API_REQUEST_LIMIT_RULES_H_
