// The cairn trial subcommands: suggest, report, complete, list, get, stop,
// history and logs.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/formats/trials_csv.h"
#include "api/trial_states.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "util/number_text.h"
#include "util/time_proto.h"

namespace cairn::cli {
namespace {

using Stub = StudyClient::Stub;
namespace v1 = cairn::v1;

absl::StatusOr<std::string> ResolveTrialName(Context& c) {
  auto study = c.Client().ResolveStudyName(c.opt.study);
  if (!study.ok()) return study.status();
  return TrialName(*study, c.opt.trial);
}

}  // namespace

// Prints a trial's job log; with --follow, keeps printing until the job is
// finished.
absl::Status TrialLogs(Context& c) {
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::ReadTrialLogsRequest request;
  request.set_name(*name);
  request.set_replica(c.opt.replica);
  while (true) {
    auto chunk = c.Client().Call(&Stub::ReadTrialLogs, request);
    if (!chunk.ok()) return chunk.status();
    *c.out << chunk->data() << std::flush;
    request.set_offset(chunk->next_offset());
    if (chunk->complete() || (!c.opt.follow && chunk->data().empty())) break;
    if (chunk->data().empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  return absl::OkStatus();
}

absl::Status TrialSuggest(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  v1::SuggestTrialsRequest request;
  request.set_parent(study->name());
  request.set_suggestion_count(c.opt.count);
  request.set_client_id(c.opt.client_id);
  auto response = c.Client().Call(&Stub::SuggestTrials, request);
  if (!response.ok()) return response.status();
  const api::formats::ParameterKinds kinds =
      api::formats::ParameterKindsOf(study->spec());
  if (response->trials_size() == 0) {
    std::string why = response->message();
    if (why.empty()) {
      why = absl::StrCat("study is ",
                         v1::Study::State_Name(response->study_state()));
    }
    *c.err << "cairn: no trials suggested for " << study->name() << ": " << why
           << "\n";
  }
  if (c.opt.json) {
    if (absl::Status s = WriteJson(*response, *c.out); !s.ok()) return s;
  } else if (response->trials_size() > 0) {
    std::vector<v1::Trial> trials(response->trials().begin(),
                                  response->trials().end());
    *c.out << TrialsTable(trials, kinds);
  }
  return absl::OkStatus();
}

absl::Status TrialReport(Context& c) {
  // Local checks first, so a typo costs no round trip.
  auto metrics = ParseMetricAssignments(c.opt.metrics);
  if (!metrics.ok()) return metrics.status();
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::AddTrialMeasurementRequest request;
  request.set_trial_name(*name);
  v1::Measurement* m = request.mutable_measurement();
  m->set_step_count(c.opt.step);
  if (c.opt.elapsed_seconds >= 0) {
    *m->mutable_elapsed_duration() =
        util::SecondsToProtoDuration(c.opt.elapsed_seconds);
  }
  for (auto& metric : *metrics) *m->add_metrics() = std::move(metric);
  auto trial = c.Client().Call(&Stub::AddTrialMeasurement, request);
  return trial.status();
}

absl::Status TrialComplete(Context& c) {
  auto metrics = ParseMetricAssignments(c.opt.metrics);
  if (!metrics.ok()) return metrics.status();
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::CompleteTrialRequest request;
  request.set_name(*name);
  if (!c.opt.infeasible_reason.empty()) {
    request.set_trial_infeasible(true);
    request.set_infeasible_reason(c.opt.infeasible_reason);
  }
  if (!metrics->empty()) {
    v1::Measurement* m = request.mutable_final_measurement();
    m->set_step_count(c.opt.step);
    if (c.opt.elapsed_seconds >= 0) {
      *m->mutable_elapsed_duration() =
          util::SecondsToProtoDuration(c.opt.elapsed_seconds);
    }
    for (auto& metric : *metrics) *m->add_metrics() = std::move(metric);
  }
  auto trial = c.Client().Call(&Stub::CompleteTrial, request);
  if (!trial.ok()) return trial.status();
  *c.out << trial->name() << " " << v1::Trial::State_Name(trial->state());
  if (trial->has_final_measurement() &&
      trial->final_measurement().metrics_size() > 0) {
    *c.out << " " << MetricsToText(trial->final_measurement());
  }
  *c.out << "\n";
  return absl::OkStatus();
}

absl::Status TrialList(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  const api::formats::ParameterKinds kinds =
      api::formats::ParameterKindsOf(study->spec());
  // Every page in one ListTrialsResponse (--json prints it).
  auto listed = c.Client().ListAllTrials(study->name());
  if (!listed.ok()) return listed.status();
  const v1::ListTrialsResponse& all = *listed;
  const std::vector<v1::Trial> trials(all.trials().begin(), all.trials().end());
  if (c.opt.json) {
    if (absl::Status s = WriteJson(all, *c.out); !s.ok()) return s;
  } else if (c.opt.csv) {
    *c.out << api::formats::TrialsCsv(trials, study->spec());
  } else {
    *c.out << TrialsTable(trials, kinds);
  }
  return absl::OkStatus();
}

absl::Status TrialGet(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  auto name = TrialName(study->name(), c.opt.trial);
  if (!name.ok()) return name.status();
  v1::GetTrialRequest request;
  request.set_name(*name);
  auto trial = c.Client().Call(&Stub::GetTrial, request);
  if (!trial.ok()) return trial.status();
  if (c.opt.json) {
    if (absl::Status s = WriteJson(*trial, *c.out); !s.ok()) return s;
  } else {
    *c.out << TrialToText(*trial,
                          api::formats::ParameterKindsOf(study->spec()));
  }
  return absl::OkStatus();
}

absl::Status TrialStop(Context& c) {
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::StopTrialRequest request;
  request.set_name(*name);
  auto trial = c.Client().Call(&Stub::StopTrial, request);
  if (!trial.ok()) return trial.status();
  *c.out << trial->name() << " " << v1::Trial::State_Name(trial->state());
  if (!api::IsPendingState(trial->state()) &&
      trial->job().state() == v1::TrialJob::STOPPING) {
    *c.out << "; its job still runs and is being stopped";
  }
  *c.out << "\n";
  return absl::OkStatus();
}

namespace {

// One point as `trial history` prints it: its protobuf JSON mapping (one
// line) or "STEP VALUE".
absl::StatusOr<std::string> HistoryLine(const v1::MetricPoint& p,
                                        bool as_json) {
  if (!as_json) {
    return absl::StrCat(p.step_count(), " ", util::SixDigitNumber(p.value()));
  }
  return ProtoToJson(p, /*pretty=*/false);
}

v1::GetMetricHistoryRequest HistoryRequest(const Options& o,
                                           const std::string& trial) {
  v1::GetMetricHistoryRequest request;
  request.set_trial_name(trial);
  request.set_metric_id(o.metric);
  request.set_page_size(o.page_size);
  request.set_max_points(o.max_points);
  if (o.start_step.has_value())
    request.mutable_start_step()->set_value(*o.start_step);
  if (o.end_step.has_value())
    request.mutable_end_step()->set_value(*o.end_step);
  return request;
}

}  // namespace

// Prints each page as it arrives, so a curve of any length streams in
// bounded memory. --json prints the GetMetricHistoryResponse of the whole
// curve, {"points": [...], "nextPageToken": ""}, a point per line.
absl::Status TrialHistory(Context& c) {
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::GetMetricHistoryRequest request = HistoryRequest(c.opt, *name);
  bool first = true;
  constexpr char kJsonEnd[] = "],\n\"nextPageToken\": \"\"}\n";
  if (c.opt.json) *c.out << "{\"points\": [";
  do {
    auto response = c.Client().Call(&Stub::GetMetricHistory, request);
    if (!response.ok()) {
      if (c.opt.json) *c.out << "\n" << kJsonEnd;  // Keep the output valid.
      return response.status();
    }
    for (const auto& p : response->points()) {
      if (c.opt.json) *c.out << (first ? "\n  " : ",\n  ");
      absl::StatusOr<std::string> line = HistoryLine(p, c.opt.json);
      if (!line.ok()) {
        if (c.opt.json) *c.out << "\n" << kJsonEnd;  // Keep the output valid.
        return line.status();
      }
      *c.out << *line << (c.opt.json ? "" : "\n");
      first = false;
    }
    c.out->flush();
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  if (c.opt.json) *c.out << (first ? "" : "\n") << kJsonEnd;
  return absl::OkStatus();
}

}  // namespace cairn::cli
