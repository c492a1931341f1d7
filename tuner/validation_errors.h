// How the spec validators word an error: every one is InvalidArgument
// "<field path>: <what is wrong>", and user text in it is quoted and
// shortened (util/quote.h). Shared by spec_validation.cc,
// search_space_validation.cc and job_template_validation.cc.
//
// All functions are pure and thread-safe.
#ifndef CAIRN_TUNER_VALIDATION_ERRORS_H_
#define CAIRN_TUNER_VALIDATION_ERRORS_H_

#include <string>

#include "absl/status/status.h"

namespace cairn::tuner::validation {

// `s` quoted for an error message (util::QuoteForError).
std::string Quote(const std::string& s);

// "parameters[1] (lr)", or "parameters[1]" when the id is empty; at most 64
// characters of the id.
std::string Where(const std::string& path, const std::string& id);

// InvalidArgument "<where>: <what>".
absl::Status Bad(const std::string& where, const std::string& what);

// The name of a ParameterSpec::Type or ScaleType value, or its number when
// it is not a known value.
std::string TypeName(int type);
std::string ScaleName(int scale);

}  // namespace cairn::tuner::validation

#endif  // CAIRN_TUNER_VALIDATION_ERRORS_H_
