// Resource name parsing shared by the controller and its clients.
#include "api/resource_names.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/quote.h"

namespace cairn::api {
namespace {

bool ParseId(absl::string_view text, int64_t* id) {
  return absl::SimpleAtoi(text, id) && *id > 0 &&
         text.find_first_not_of("0123456789") == absl::string_view::npos;
}

}  // namespace

std::string StudyName(int64_t study_id) {
  return absl::StrCat("studies/", study_id);
}

std::string TrialResourceName(int64_t study_id, int64_t trial_id) {
  return absl::StrCat("studies/", study_id, "/trials/", trial_id);
}

absl::StatusOr<int64_t> ParseStudyName(absl::string_view name,
                                       absl::string_view field) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  int64_t id = 0;
  if (parts.size() != 2 || parts[0] != "studies" || !ParseId(parts[1], &id)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", util::QuoteForError(name),
                     " is not a study name (expected studies/{id})"));
  }
  return id;
}

absl::StatusOr<TrialName> ParseTrialName(absl::string_view name,
                                         absl::string_view field) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  TrialName out;
  if (parts.size() != 4 || parts[0] != "studies" || parts[2] != "trials" ||
      !ParseId(parts[1], &out.study_id) || !ParseId(parts[3], &out.trial_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", util::QuoteForError(name),
        " is not a trial name (expected studies/{id}/trials/{id})"));
  }
  return out;
}

}  // namespace cairn::api
