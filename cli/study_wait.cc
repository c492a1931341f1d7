// `cairn study wait`: progress until the study ends, across cairnd restarts
// (see study_wait.h).
#include "cli/study_wait.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "util/number_text.h"

namespace cairn::cli {
namespace {

namespace v1 = cairn::v1;
using Stub = StudyClient::Stub;
using Clock = std::chrono::steady_clock;

// "loss 0.4 (trial 7)" for the study's first metric, "" without a best trial.
std::string BestText(const v1::Study& study,
                     const v1::ListOptimalTrialsResponse& best) {
  if (best.optimal_trials_size() == 0 || study.spec().metrics_size() == 0) {
    return "";
  }
  const v1::Trial& t = best.optimal_trials(0);
  for (const auto& m : t.final_measurement().metrics()) {
    if (m.metric_id() != study.spec().metrics(0).metric_id()) continue;
    return absl::StrCat(m.metric_id(), " ", util::SixDigitNumber(m.value()),
                        " (trial ", t.id(), ")");
  }
  return "";
}

// The final line and exit status once the study is no longer ACTIVE.
absl::Status Finish(Context& c, const StudyProgress& p) {
  *c.out << p.name << " is " << v1::Study::State_Name(p.state)
         << (p.inactive_reason.empty() ? "" : ": ") << p.inactive_reason
         << std::endl;
  if (p.state == v1::Study::FAILED) {
    return absl::AbortedError(
        absl::StrCat("study ", p.name, " failed: ", p.inactive_reason));
  }
  return absl::OkStatus();
}

void Sleep(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

absl::StatusOr<StudyProgress> FetchStudyProgress(StudyClient& client,
                                                 const std::string& name) {
  v1::GetStudyRequest get;
  get.set_name(name);
  auto study = client.Call(&Stub::GetStudy, get);
  if (!study.ok()) return study.status();
  v1::ListOptimalTrialsRequest best_request;
  best_request.set_parent(name);
  auto best = client.Call(&Stub::ListOptimalTrials, best_request);
  if (!best.ok()) return best.status();
  StudyProgress p;
  p.name = study->name();
  p.done = study->trial_count() - study->pending_count();
  p.total = study->spec().max_trials();
  p.running = study->pending_count();
  p.failed = study->failed_count();
  p.best = BestText(*study, *best);
  p.state = study->state();
  p.inactive_reason = study->inactive_reason();
  return p;
}

std::string FormatStudyProgress(const StudyProgress& p) {
  std::string line =
      absl::StrCat(p.name, ": ", p.done, "/",
                   p.total > 0 ? absl::StrCat(p.total) : std::string("?"),
                   " trials done, ", p.running, " running");
  if (p.failed > 0) absl::StrAppend(&line, ", ", p.failed, " failed");
  if (!p.best.empty()) absl::StrAppend(&line, ", best ", p.best);
  return line;
}

bool IsReconnectable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

void ProgressPrinter::Show(const std::string& line) {
  if (terminal_) {
    *out_ << "\r\033[K" << line << std::flush;
    line_open_ = true;
  } else if (line != last_) {
    *out_ << line << std::endl;
  }
  last_ = line;
}

void ProgressPrinter::Note(const std::string& line) {
  if (terminal_) *out_ << "\r\033[K";
  *out_ << line << std::endl;
  line_open_ = false;
  // Plain output repeats the progress line after a note only if it changed.
}

void ProgressPrinter::Finish() {
  if (terminal_ && line_open_) *out_ << std::endl;
  line_open_ = false;
}

std::chrono::milliseconds ReconnectBackoff::Next() {
  const std::chrono::milliseconds now = next_;
  next_ = std::min(next_ * 2, kMax);
  return now;
}

// Polls every --interval seconds. The first poll is not retried (a wrong
// --server fails at once); after that, UNAVAILABLE/DEADLINE_EXCEEDED mean
// cairnd is restarting: a note is printed and the poll retried on a new
// connection with backoff for up to --reconnect-timeout seconds.
absl::Status StudyWait(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  ProgressPrinter printer(c.out, c.out_is_terminal);
  ReconnectBackoff backoff;
  bool reached = false;
  std::optional<Clock::time_point> down_since;
  while (true) {
    absl::StatusOr<StudyProgress> p = FetchStudyProgress(c.Client(), *name);
    if (!p.ok()) {
      if (!reached || !IsReconnectable(p.status())) return p.status();
      c.client.reset();  // The next poll dials a new connection.
      if (!down_since) {
        down_since = Clock::now();
        printer.Note(absl::StrCat("cairnd at ", c.opt.server,
                                  " is unavailable; reconnecting (for up to ",
                                  c.opt.reconnect_seconds, " s)"));
      } else if (SecondsSince(*down_since) > c.opt.reconnect_seconds) {
        return absl::UnavailableError(absl::StrCat(
            "gave up after ", c.opt.reconnect_seconds,
            " s without cairnd (--reconnect-timeout): ", p.status().message()));
      }
      Sleep(backoff.Next());
      continue;
    }
    reached = true;
    if (down_since) {
      printer.Note(absl::StrFormat("reconnected to cairnd after %.1f s",
                                   SecondsSince(*down_since)));
      down_since.reset();
      backoff.Reset();
    }
    printer.Show(FormatStudyProgress(*p));
    if (p->state != v1::Study::ACTIVE) {
      printer.Finish();
      return Finish(c, *p);
    }
    Sleep(Millis(c.opt.interval_seconds));
  }
}

}  // namespace cairn::cli
