// Wording of the spec validators' errors (see validation_errors.h).
#include "tuner/validation_errors.h"

#include "absl/strings/str_cat.h"
#include "cairn/v1/study.pb.h"
#include "util/quote.h"

namespace cairn::tuner::validation {

using cairn::v1::ParameterSpec;

std::string Quote(const std::string& s) { return util::QuoteForError(s); }

std::string Where(const std::string& path, const std::string& id) {
  if (id.empty()) return path;
  return absl::StrCat(path, " (", util::ShortenForError(id, 64), ")");
}

absl::Status Bad(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

std::string TypeName(int type) {
  if (ParameterSpec::Type_IsValid(type)) {
    return ParameterSpec::Type_Name(static_cast<ParameterSpec::Type>(type));
  }
  return absl::StrCat(type);
}

std::string ScaleName(int scale) {
  if (ParameterSpec::ScaleType_IsValid(scale)) {
    return ParameterSpec::ScaleType_Name(
        static_cast<ParameterSpec::ScaleType>(scale));
  }
  return absl::StrCat(scale);
}

}  // namespace cairn::tuner::validation
