// The filter of AI Platform's projects.jobs.list (gcloud's --filter, the
// REST list's ?filter=, ListJobsRequest.filter): which jobs a list returns.
//
// Grammar (the subset of AIP-160 that AI Platform documents for jobs):
//   FILTER := "" | TERM ( "AND" TERM )*
//   TERM   := FIELD ( ":" | "=" ) VALUE
//   FIELD  := jobId | state | labels.KEY      (jobId and state in any case)
//   VALUE  := a word or a "double-quoted string"
// A job matches when it matches every term. `state` takes a Job.State name
// in any case (QUEUED, ..., CANCELLED). For jobId and labels.KEY the value
// matches exactly, or, ending in '*', as a prefix: `jobId:census*`,
// `jobId:rnn* AND state:FAILED`, `labels.team=vision`. OR, NOT and
// parentheses are refused, as is anything else.
#ifndef CAIRN_AIPLATFORM_JOB_FILTER_H_
#define CAIRN_AIPLATFORM_JOB_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/aiplatform.pb.h"

namespace cairn::aiplatform {

class JobFilter {
 public:
  // Matches every job (STATE_UNSPECIFIED) or those in `state`.
  explicit JobFilter(
      cairn::v1::Job::State state = cairn::v1::Job::STATE_UNSPECIFIED);

  // Parses `filter`. InvalidArgument starting with `what` (the flag or field
  // the filter came from), naming the term at fault, for text that is not
  // the grammar above, more than kMaxTerms terms, a value longer than
  // kMaxValueLength, or an unknown state.
  static absl::StatusOr<JobFilter> Parse(absl::string_view filter,
                                         absl::string_view what);

  // Adds the term state=STATE (none for STATE_UNSPECIFIED).
  void RequireState(cairn::v1::Job::State state);

  bool Matches(const cairn::v1::Job& job) const;
  // Whether `job` matches every term but the state terms: false means
  // Matches is false whatever the job's state, so a list need not work out
  // the state (a job's view reads its study) of a job that cannot match.
  bool MayMatch(const cairn::v1::Job& job) const;

  static constexpr int kMaxTerms = 16;
  // A term's value (a job id or label value is at most 128 or 256).
  static constexpr int kMaxValueLength = 256;

 private:
  struct Term {
    enum class Field { kJobId, kState, kLabel } field;
    std::string label_key;  // kLabel.
    std::string value;      // kJobId, kLabel: without '*'.
    bool prefix = false;    // The value ended in '*'.
    cairn::v1::Job::State state = cairn::v1::Job::STATE_UNSPECIFIED;
  };
  static absl::StatusOr<Term> ParseTerm(absl::string_view term);
  static bool MatchesTerm(const Term& term, const cairn::v1::Job& job);
  bool MatchesTerms(const cairn::v1::Job& job, bool with_state) const;

  std::vector<Term> terms_;
};

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_FILTER_H_
