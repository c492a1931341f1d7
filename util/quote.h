// One way to echo a user's value in an error message: quoted, escaped, and
// at most kMaxQuotedBytes of it, so no error grows with its input (a 1 MB
// parameter_id gives a message of a few hundred bytes).
#ifndef CAIRN_UTIL_QUOTE_H_
#define CAIRN_UTIL_QUOTE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace cairn::util {

// How much of a value an error echoes.
inline constexpr size_t kMaxQuotedBytes = 64;

// "value" with C-style hex escapes (control and non-ASCII bytes as \xNN),
// of at most the first kMaxQuotedBytes of `value`; a longer value is followed
// by
// `... (N bytes)`. The result is at most 4 * 64 + 30 characters.
std::string QuoteForError(absl::string_view value);

// `text` cut to at most `max` bytes: its first and last parts joined by
// "...", for messages built from user-controlled paths.
std::string ShortenForError(absl::string_view text, size_t max);

}  // namespace cairn::util

#endif  // CAIRN_UTIL_QUOTE_H_
