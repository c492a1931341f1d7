// Quoting user input in error messages: see quote.h.
#include "util/quote.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cairn::util {

std::string QuoteForError(absl::string_view value) {
  constexpr size_t kMax = kMaxQuotedBytes;
  if (value.size() <= kMax) {
    return absl::StrCat("\"", absl::CHexEscape(value), "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(value.substr(0, kMax)), "\"... (",
                      value.size(), " bytes)");
}

std::string ShortenForError(absl::string_view text, size_t max) {
  if (text.size() <= max || max < 8) return std::string(text.substr(0, max));
  const size_t head = (max - 3) / 3;
  const size_t tail = max - 3 - head;
  return absl::StrCat(text.substr(0, head), "...",
                      text.substr(text.size() - tail));
}

}  // namespace cairn::util
