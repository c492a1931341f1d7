// The jobs.list filter: parsing and matching (see job_filter.h).
#include "aiplatform/job_filter.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "util/quote.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;

// The words of `filter` (runs of non-space characters; a double-quoted
// string, spaces included, is part of its word); InvalidArgument for an
// unclosed quote.
absl::StatusOr<std::vector<std::string>> Words(absl::string_view filter) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false;
  for (char c : filter) {
    if (c == '"') quoted = !quoted;
    if (!quoted && absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      continue;
    }
    word.push_back(c);
  }
  if (quoted) return absl::InvalidArgumentError("has an unclosed '\"'");
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// The terms of `words`: the words between "AND"s, joined again (so
// `state = FAILED` is one term).
absl::StatusOr<std::vector<std::string>> Terms(
    const std::vector<std::string>& words) {
  std::vector<std::string> terms(1);
  for (const std::string& w : words) {
    if (w == "OR" || w == "NOT" || absl::StartsWith(w, "(") ||
        absl::StartsWith(w, "-")) {
      return absl::InvalidArgumentError(
          absl::StrCat("uses ", util::QuoteForError(w),
                       ": only terms joined by AND are served"));
    }
    if (w == "AND") {
      if (terms.back().empty()) break;
      terms.emplace_back();
      continue;
    }
    std::string& term = terms.back();
    // Spaces may stand around the operator only: `state = FAILED`.
    if (!term.empty() && !absl::EndsWith(term, ":") &&
        !absl::EndsWith(term, "=") && !absl::StartsWith(w, ":") &&
        !absl::StartsWith(w, "=")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "has ", util::QuoteForError(w), " after a term without AND"));
    }
    absl::StrAppend(&term, w);
  }
  if (terms.back().empty()) {
    return absl::InvalidArgumentError("has an AND without a term after it");
  }
  return terms;
}

}  // namespace

JobFilter::JobFilter(Job::State state) { RequireState(state); }

void JobFilter::RequireState(Job::State state) {
  if (state == Job::STATE_UNSPECIFIED) return;
  Term term;
  term.field = Term::Field::kState;
  term.state = state;
  terms_.push_back(std::move(term));
}

absl::StatusOr<JobFilter> JobFilter::Parse(absl::string_view filter,
                                           absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", util::QuoteForError(filter), " ", why,
        " (want e.g. jobId:census*, state=FAILED, labels.team=vision, "
        "joined by AND)"));
  };
  JobFilter out;
  if (absl::StripAsciiWhitespace(filter).empty()) return out;
  absl::StatusOr<std::vector<std::string>> words = Words(filter);
  if (!words.ok()) return bad(words.status().message());
  absl::StatusOr<std::vector<std::string>> terms = Terms(*words);
  if (!terms.ok()) return bad(terms.status().message());
  if (terms->size() > static_cast<size_t>(kMaxTerms)) {
    return bad(absl::StrCat("has ", terms->size(), " terms (at most ",
                            kMaxTerms, ")"));
  }
  for (const std::string& text : *terms) {
    absl::StatusOr<Term> term = ParseTerm(text);
    if (!term.ok()) {
      return bad(absl::StrCat("has term ", util::QuoteForError(text), ": ",
                              term.status().message()));
    }
    out.terms_.push_back(*std::move(term));
  }
  return out;
}

absl::StatusOr<JobFilter::Term> JobFilter::ParseTerm(absl::string_view text) {
  const size_t op = text.find_first_of(":=");
  if (op == absl::string_view::npos || op == 0) {
    return absl::InvalidArgumentError("is not FIELD:VALUE or FIELD=VALUE");
  }
  absl::string_view field = text.substr(0, op);
  absl::string_view value = text.substr(op + 1);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  } else if (absl::StrContains(value, '"')) {
    return absl::InvalidArgumentError("has a stray '\"'");
  }
  if (value.size() > static_cast<size_t>(kMaxValueLength)) {
    return absl::InvalidArgumentError(
        absl::StrCat("has a value of ", value.size(), " characters (at most ",
                     kMaxValueLength, ")"));
  }
  Term term;
  if (absl::EqualsIgnoreCase(field, "state")) {
    term.field = Term::Field::kState;
    if (!Job::State_Parse(absl::AsciiStrToUpper(value), &term.state) ||
        term.state == Job::STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          "the state is none of QUEUED, PREPARING, RUNNING, SUCCEEDED, "
          "FAILED, CANCELLING, CANCELLED");
    }
    return term;
  }
  if (absl::EqualsIgnoreCase(field, "jobId")) {
    term.field = Term::Field::kJobId;
  } else if (absl::ConsumePrefix(&field, "labels.") && !field.empty()) {
    term.field = Term::Field::kLabel;
    term.label_key = std::string(field);
  } else {
    return absl::InvalidArgumentError(
        "names no field a job list filters on (jobId, state, labels.KEY)");
  }
  term.prefix = absl::ConsumeSuffix(&value, "*");
  term.value = std::string(value);
  return term;
}

bool JobFilter::MatchesTerm(const Term& term, const Job& job) {
  const std::string* text = &job.job_id();
  switch (term.field) {
    case Term::Field::kState:
      return job.state() == term.state;
    case Term::Field::kJobId:
      break;
    case Term::Field::kLabel: {
      auto it = job.labels().find(term.label_key);
      if (it == job.labels().end()) return false;
      text = &it->second;
      break;
    }
  }
  return term.prefix ? absl::StartsWith(*text, term.value)
                     : *text == term.value;
}

bool JobFilter::MatchesTerms(const Job& job, bool with_state) const {
  for (const Term& term : terms_) {
    if (!with_state && term.field == Term::Field::kState) continue;
    if (!MatchesTerm(term, job)) return false;
  }
  return true;
}

bool JobFilter::Matches(const Job& job) const {
  return MatchesTerms(job, /*with_state=*/true);
}

bool JobFilter::MayMatch(const Job& job) const {
  return MatchesTerms(job, /*with_state=*/false);
}

}  // namespace cairn::aiplatform
