// The parts of `cairn study wait`: a progress snapshot of a study, its one-line
// rendering, a printer that updates the line in place on a terminal (plain
// lines otherwise), and the reconnect backoff used while cairnd is away.
#ifndef CAIRN_CLI_STUDY_WAIT_H_
#define CAIRN_CLI_STUDY_WAIT_H_

#include <chrono>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "cli/client.h"

namespace cairn::cli {

// What `study wait` shows of a study at one poll.
struct StudyProgress {
  std::string name;
  int done = 0;      // Trials that ended, in any way (cancelled too).
  int total = 0;     // spec.max_trials; 0 when unlimited.
  int running = 0;   // REQUESTED, ACTIVE or STOPPING.
  int failed = 0;    // FAILED (jobs that failed).
  std::string best;  // "loss 0.4 (trial 7)" for the first metric; "" if none.
  cairn::v1::Study::State state = cairn::v1::Study::STATE_UNSPECIFIED;
  std::string inactive_reason;
};

// Reads the study and its best trial (GetStudy, ListOptimalTrials).
absl::StatusOr<StudyProgress> FetchStudyProgress(StudyClient& client,
                                                 const std::string& name);

// "studies/1: 3/10 trials done, 2 running, 1 failed, best loss 0.4 (trial
// 2)"; total "?" when unlimited; ", N failed" only when N > 0.
std::string FormatStudyProgress(const StudyProgress& p);

// Whether a failed RPC means cairnd is (for now) unreachable, so a waiting
// client should reconnect: UNAVAILABLE or DEADLINE_EXCEEDED.
bool IsReconnectable(const absl::Status& status);

// Shows the progress line. On a terminal each Show() rewrites the current
// line in place ("\r", erase line); otherwise a line is printed only when it
// differs from the last one. Note() prints a permanent line (on a terminal
// it replaces the progress line, which the next Show() redraws below it).
// Thread-compatible.
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream* out, bool terminal)
      : out_(out), terminal_(terminal) {}
  void Show(const std::string& line);
  void Note(const std::string& line);
  // Ends an in-place line with a newline (terminal only).
  void Finish();

 private:
  std::ostream* out_;
  bool terminal_;
  bool line_open_ = false;  // Terminal: a progress line without "\n" shown.
  std::string last_;
};

// Exponential backoff: 250 ms, doubling to at most 5 s; Reset() after a
// successful call.
class ReconnectBackoff {
 public:
  std::chrono::milliseconds Next();
  void Reset() { next_ = kInitial; }

  static constexpr std::chrono::milliseconds kInitial{250};
  static constexpr std::chrono::milliseconds kMax{5000};

 private:
  std::chrono::milliseconds next_ = kInitial;
};

}  // namespace cairn::cli

#endif  // CAIRN_CLI_STUDY_WAIT_H_
