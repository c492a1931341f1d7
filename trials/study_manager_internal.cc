// Helpers of the study_manager*.cc files: see study_manager_internal.h.
#include "trials/study_manager_internal.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/quote.h"

namespace cairn::study_manager_internal {

absl::StatusOr<int64_t> ParsePageToken(const std::string& token) {
  if (token.empty()) return 0;
  int64_t after = 0;
  if (!absl::SimpleAtoi(token, &after) || after < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_token: ", util::QuoteForError(token),
                     " is not a valid page token"));
  }
  return after;
}

absl::Status CheckPageSize(int page_size) {
  if (page_size >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("page_size: ", page_size, " must be >= 0"));
}

WriteTimer::~WriteTimer() {
  if (observer_ == nullptr) return;
  observer_->OnStoreWrite(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count());
}

}  // namespace cairn::study_manager_internal
