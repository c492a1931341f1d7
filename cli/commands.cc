// The cairn subcommands. Each handler resolves its arguments, makes its RPCs
// through StudyClient and prints the result; errors travel back as
// absl::Status and become one "cairn: error:" line in RunCli.
#include "cli/commands.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/study_config.h"
#include "nlohmann/json.hpp"
#include "proto/cairn/v1/limits.h"

namespace cairn::cli {
namespace {

using json = nlohmann::ordered_json;
using Stub = StudyClient::Stub;
namespace v1 = cairn::v1;

constexpr char kDefaultServer[] = "127.0.0.1:50051";

// Everything the command line sets; handlers read it after parsing.
struct Options {
  std::string server = kDefaultServer;
  double timeout_seconds = 30;
  bool json = false;

  std::string config;
  std::string display_name;
  std::string study;
  std::string trial;
  std::string metric;
  std::string state;
  std::vector<std::string> metrics;
  int count = 1;
  std::string client_id;
  int64_t step = 0;
  double elapsed_seconds = -1;
  std::string infeasible_reason;
  bool follow = false;
  double interval_seconds = 2;
};

struct Context {
  Options opt;
  std::ostream* out;
  std::ostream* err;
  std::unique_ptr<StudyClient> client;

  StudyClient& Client() {
    if (!client) {
      client = std::make_unique<StudyClient>(
          opt.server, std::chrono::milliseconds(static_cast<int64_t>(
                          std::llround(opt.timeout_seconds * 1000))));
    }
    return *client;
  }
};

// Parses a protobuf JSON string back into nlohmann::json, to embed protos in
// JSON arrays.
json ProtoToJsonValue(const google::protobuf::Message& message) {
  return json::parse(ProtoToJson(message));
}

google::protobuf::Duration SecondsToDuration(double seconds) {
  google::protobuf::Duration d;
  const double whole = std::floor(seconds);
  d.set_seconds(static_cast<int64_t>(whole));
  d.set_nanos(static_cast<int32_t>(std::llround((seconds - whole) * 1e9)));
  if (d.nanos() >= 1000000000) {
    d.set_seconds(d.seconds() + 1);
    d.set_nanos(d.nanos() - 1000000000);
  }
  return d;
}

absl::Status StudyCreate(Context& c) {
  auto spec = LoadStudySpecFile(c.opt.config);
  if (!spec.ok()) return spec.status();
  v1::CreateStudyRequest request;
  request.mutable_study()->set_display_name(
      c.opt.display_name.empty() ? DisplayNameFromPath(c.opt.config)
                                 : c.opt.display_name);
  *request.mutable_study()->mutable_spec() = *std::move(spec);
  auto study = c.Client().Call(&Stub::CreateStudy, request);
  if (!study.ok()) return study.status();
  *c.out << study->name() << "\n";
  return absl::OkStatus();
}

absl::Status StudyList(Context& c) {
  std::vector<v1::Study> studies;
  v1::ListStudiesRequest request;
  do {
    auto response = c.Client().Call(&Stub::ListStudies, request);
    if (!response.ok()) return response.status();
    studies.insert(studies.end(), response->studies().begin(),
                   response->studies().end());
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  if (c.opt.json) {
    json array = json::array();
    for (const auto& s : studies) array.push_back(ProtoToJsonValue(s));
    *c.out << array.dump(2) << "\n";
  } else {
    *c.out << StudiesTable(studies);
  }
  return absl::OkStatus();
}

absl::Status StudyGet(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  *c.out << ProtoToJson(*study) << "\n";
  return absl::OkStatus();
}

absl::Status StudyDelete(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::DeleteStudyRequest request;
  request.set_name(*name);
  auto response = c.Client().Call(&Stub::DeleteStudy, request);
  if (!response.ok()) return response.status();
  *c.out << "deleted " << *name << "\n";
  return absl::OkStatus();
}

absl::Status StudyBest(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  const ParameterKinds kinds = ParameterKindsOf(study->spec());
  v1::ListOptimalTrialsRequest request;
  request.set_parent(study->name());
  auto response = c.Client().Call(&Stub::ListOptimalTrials, request);
  if (!response.ok()) return response.status();
  if (c.opt.json) {
    json array = json::array();
    for (const auto& t : response->optimal_trials()) {
      array.push_back(TrialToFlatJson(t, kinds));
    }
    *c.out << array.dump(2) << "\n";
    return absl::OkStatus();
  }
  if (response->optimal_trials_size() == 0) {
    *c.out << "no completed trials in " << study->name() << "\n";
    return absl::OkStatus();
  }
  bool first = true;
  for (const auto& t : response->optimal_trials()) {
    if (!first) *c.out << "\n";
    first = false;
    *c.out << TrialToText(t, kinds);
  }
  return absl::OkStatus();
}

absl::Status StudySetState(Context& c) {
  std::string upper = c.opt.state;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
  v1::Study::State state;
  if (!v1::Study::State_Parse(upper, &state) ||
      state == v1::Study::STATE_UNSPECIFIED || state == v1::Study::FAILED) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad study state \"", c.opt.state,
                     "\": expected active, inactive or completed"));
  }
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::SetStudyStateRequest request;
  request.set_name(*name);
  request.set_state(state);
  auto study = c.Client().Call(&Stub::SetStudyState, request);
  if (!study.ok()) return study.status();
  *c.out << study->name() << " " << v1::Study::State_Name(study->state())
         << "\n";
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveTrialName(Context& c);

// Polls the study until it leaves ACTIVE, printing a progress line whenever
// it changes: trials done/total, running, best so far.
absl::Status StudyWait(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  std::string last_line;
  while (true) {
    v1::GetStudyRequest get;
    get.set_name(*name);
    auto study = c.Client().Call(&Stub::GetStudy, get);
    if (!study.ok()) return study.status();
    v1::ListOptimalTrialsRequest best_request;
    best_request.set_parent(*name);
    auto best = c.Client().Call(&Stub::ListOptimalTrials, best_request);
    if (!best.ok()) return best.status();
    const int done = study->succeeded_count() + study->failed_count();
    std::string line =
        absl::StrCat(study->name(), ": ", done, "/",
                     study->spec().max_trials() > 0
                         ? absl::StrCat(study->spec().max_trials())
                         : std::string("?"),
                     " trials done, ", study->pending_count(), " running");
    if (study->failed_count() > 0) {
      absl::StrAppend(&line, ", ", study->failed_count(), " failed");
    }
    if (best->optimal_trials_size() > 0 && study->spec().metrics_size() > 0) {
      const v1::Trial& t = best->optimal_trials(0);
      for (const auto& m : t.final_measurement().metrics()) {
        if (m.metric_id() != study->spec().metrics(0).metric_id()) continue;
        absl::StrAppend(&line, ", best ", m.metric_id(), " ",
                        FormatNumber(m.value()), " (trial ", t.id(), ")");
      }
    }
    if (line != last_line) {
      *c.out << line << std::endl;
      last_line = line;
    }
    if (study->state() != v1::Study::ACTIVE) {
      *c.out << study->name() << " is " << v1::Study::State_Name(study->state())
             << (study->inactive_reason().empty() ? "" : ": ")
             << study->inactive_reason() << std::endl;
      if (study->state() == v1::Study::FAILED) {
        return absl::AbortedError(absl::StrCat(
            "study ", study->name(), " failed: ", study->inactive_reason()));
      }
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(
        static_cast<int64_t>(c.opt.interval_seconds * 1000)));
  }
}

// Stops a study: no new trials, and cairnd cancels its running jobs.
absl::Status StudyStop(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::SetStudyStateRequest request;
  request.set_name(*name);
  request.set_state(v1::Study::INACTIVE);
  auto study = c.Client().Call(&Stub::SetStudyState, request);
  if (!study.ok()) return study.status();
  *c.out << study->name() << " stopped (INACTIVE); its running jobs are "
         << "cancelled. Resume with: cairn study set-state " << study->name()
         << " active\n";
  return absl::OkStatus();
}

// Prints a trial's job log; with --follow, keeps printing until the job is
// finished.
absl::Status TrialLogs(Context& c) {
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::ReadTrialLogsRequest request;
  request.set_name(*name);
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
  const ParameterKinds kinds = ParameterKindsOf(study->spec());
  if (response->trials_size() == 0) {
    std::string why = response->message();
    if (why.empty()) {
      why = absl::StrCat("study is ",
                         v1::Study::State_Name(response->study_state()));
    }
    *c.err << "cairn: no trials suggested for " << study->name() << ": " << why
           << "\n";
    if (c.opt.json) *c.out << "[]\n";
    return absl::OkStatus();
  }
  if (c.opt.json) {
    json array = json::array();
    for (const auto& t : response->trials()) {
      array.push_back(SuggestionToJson(t, kinds));
    }
    *c.out << array.dump() << "\n";
  } else {
    std::vector<v1::Trial> trials(response->trials().begin(),
                                  response->trials().end());
    *c.out << TrialsTable(trials, kinds);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveTrialName(Context& c) {
  auto study = c.Client().ResolveStudyName(c.opt.study);
  if (!study.ok()) return study.status();
  return TrialName(*study, c.opt.trial);
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
    *m->mutable_elapsed_duration() = SecondsToDuration(c.opt.elapsed_seconds);
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
      *m->mutable_elapsed_duration() = SecondsToDuration(c.opt.elapsed_seconds);
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
  const ParameterKinds kinds = ParameterKindsOf(study->spec());
  std::vector<v1::Trial> trials;
  v1::ListTrialsRequest request;
  request.set_parent(study->name());
  do {
    auto response = c.Client().Call(&Stub::ListTrials, request);
    if (!response.ok()) return response.status();
    trials.insert(trials.end(), response->trials().begin(),
                  response->trials().end());
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  if (c.opt.json) {
    json array = json::array();
    for (const auto& t : trials) array.push_back(TrialToFlatJson(t, kinds));
    *c.out << array.dump(2) << "\n";
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
    *c.out << ProtoToJson(*trial) << "\n";
  } else {
    *c.out << TrialToText(*trial, ParameterKindsOf(study->spec()));
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
  *c.out << trial->name() << " " << v1::Trial::State_Name(trial->state())
         << "\n";
  return absl::OkStatus();
}

absl::Status TrialHistory(Context& c) {
  auto name = ResolveTrialName(c);
  if (!name.ok()) return name.status();
  v1::GetMetricHistoryRequest request;
  request.set_trial_name(*name);
  request.set_metric_id(c.opt.metric);
  auto response = c.Client().Call(&Stub::GetMetricHistory, request);
  if (!response.ok()) return response.status();
  if (c.opt.json) {
    json array = json::array();
    for (const auto& p : response->points()) {
      json point = {{"step", p.step_count()}, {"value", p.value()}};
      if (p.has_elapsed_duration()) {
        point["elapsed_seconds"] = p.elapsed_duration().seconds() +
                                   p.elapsed_duration().nanos() * 1e-9;
      }
      array.push_back(point);
    }
    *c.out << array.dump(2) << "\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : response->points()) {
      rows.push_back({absl::StrCat(p.step_count()), FormatNumber(p.value())});
    }
    *c.out << FormatTable({"STEP", c.opt.metric}, rows);
  }
  return absl::OkStatus();
}

// A command's handler, run after parsing.
using Handler = absl::Status (*)(Context&);

// Builds the CLI11 command tree: options write into `opt`, and the chosen
// subcommand records its handler in *action.
class CommandTree {
 public:
  CommandTree(Options& opt, Handler* action) : o_(opt), action_(action) {}

  void AddGlobalOptions(CLI::App& app);
  void AddStudyCommands(CLI::App& app);
  void AddTrialCommands(CLI::App& app);

 private:
  void On(CLI::App* sub, Handler fn) {
    Handler* action = action_;
    sub->callback([action, fn] { *action = fn; });
  }
  void AddStudyArg(CLI::App* sub) {
    sub->add_option("STUDY", o_.study,
                    "study: studies/N, N or its display name")
        ->required();
  }
  void AddTrialArg(CLI::App* sub) {
    sub->add_option("TRIAL", o_.trial, "trial: M or studies/N/trials/M")
        ->required();
  }
  void AddJson(CLI::App* sub) {
    sub->add_flag("--json", o_.json, "print JSON instead of a table");
  }

  void AddStudyCreate(CLI::App* study);
  void AddStudySetState(CLI::App* study);
  void AddStudyWait(CLI::App* study);
  void AddTrialSuggest(CLI::App* trial);
  void AddTrialReport(CLI::App* trial);
  void AddTrialComplete(CLI::App* trial);
  void AddTrialHistory(CLI::App* trial);
  void AddTrialLogs(CLI::App* trial);

  Options& o_;
  Handler* action_;
};

void CommandTree::AddGlobalOptions(CLI::App& app) {
  app.require_subcommand(1);
  // Subcommands hand options they do not know to their parent, so the global
  // options work before or after the subcommand.
  app.fallthrough();
  // Inherited by every subcommand created after it, so their --help
  // mentions the options they accept through fallthrough.
  app.footer(
      "Global options, accepted before or after any subcommand: --server "
      "HOST:PORT (or $CAIRN_SERVER; default 127.0.0.1:50051), --timeout "
      "SECONDS (default 30).\nSTUDY is studies/N, N or a display name; TRIAL "
      "is M or studies/N/trials/M.");
  app.add_option("--server", o_.server,
                 "cairnd address HOST:PORT (default $CAIRN_SERVER, else " +
                     std::string(kDefaultServer) + ")")
      ->envname("CAIRN_SERVER");
  app.add_option("--timeout", o_.timeout_seconds,
                 "RPC deadline in seconds (default 30)")
      ->check(CLI::PositiveNumber);
}

void CommandTree::AddStudyCommands(CLI::App& app) {
  CLI::App* study =
      app.add_subcommand("study", "create, list, inspect studies");
  study->require_subcommand(1);
  AddStudyCreate(study);

  CLI::App* list = study->add_subcommand("list", "list all studies");
  AddJson(list);
  On(list, StudyList);

  CLI::App* get = study->add_subcommand("get", "print a study as JSON");
  AddStudyArg(get);
  On(get, StudyGet);

  CLI::App* del = study->add_subcommand(
      "delete", "delete a study with its trials and measurements");
  AddStudyArg(del);
  On(del, StudyDelete);

  CLI::App* best = study->add_subcommand(
      "best",
      "the best trial, or the Pareto-optimal trials for several "
      "metrics");
  AddStudyArg(best);
  AddJson(best);
  On(best, StudyBest);

  AddStudySetState(study);
  AddStudyWait(study);

  CLI::App* stop = study->add_subcommand(
      "stop", "stop a study: no new trials, running jobs are cancelled");
  AddStudyArg(stop);
  On(stop, StudyStop);
}

void CommandTree::AddStudyCreate(CLI::App* study) {
  CLI::App* create = study->add_subcommand(
      "create", "create a study from a YAML/JSON StudySpec; prints its name");
  create
      ->add_option("--config", o_.config,
                   "StudySpec file (YAML or .json, protobuf JSON mapping)")
      ->required();
  create->add_option("--name", o_.display_name,
                     "display name (default: the config file's stem)");
  On(create, StudyCreate);
}

void CommandTree::AddStudySetState(CLI::App* study) {
  CLI::App* set_state = study->add_subcommand(
      "set-state",
      "pause (inactive), resume (active) or finish (completed) a study");
  AddStudyArg(set_state);
  set_state->add_option("STATE", o_.state, "active, inactive or completed")
      ->required();
  On(set_state, StudySetState);
}

void CommandTree::AddStudyWait(CLI::App* study) {
  CLI::App* wait = study->add_subcommand(
      "wait",
      "show progress (trials done/total, running, best so far) until the "
      "study is done; exits 1 if it failed");
  AddStudyArg(wait);
  wait->add_option("--interval", o_.interval_seconds,
                   "seconds between polls (default 2)")
      ->check(CLI::PositiveNumber);
  On(wait, StudyWait);
}

void CommandTree::AddTrialCommands(CLI::App& app) {
  CLI::App* trial =
      app.add_subcommand("trial", "suggest, report, complete trials");
  trial->require_subcommand(1);
  AddTrialSuggest(trial);
  AddTrialReport(trial);
  AddTrialComplete(trial);

  CLI::App* list = trial->add_subcommand("list", "list a study's trials");
  AddStudyArg(list);
  AddJson(list);
  On(list, TrialList);

  CLI::App* get = trial->add_subcommand("get", "show one trial");
  AddStudyArg(get);
  AddTrialArg(get);
  AddJson(get);
  On(get, TrialGet);

  CLI::App* stop = trial->add_subcommand(
      "stop", "ask a running trial to stop early (state STOPPING)");
  AddStudyArg(stop);
  AddTrialArg(stop);
  On(stop, TrialStop);

  AddTrialHistory(trial);
  AddTrialLogs(trial);
}

void CommandTree::AddTrialSuggest(CLI::App* trial) {
  CLI::App* suggest = trial->add_subcommand(
      "suggest", "get new trials to evaluate; none once the study is done");
  AddStudyArg(suggest);
  suggest
      ->add_option("--count", o_.count,
                   absl::StrCat("number of trials, 1 to ",
                                cairn::v1::kMaxSuggestionCount,
                                " as cairnd allows (default 1)"))
      ->check(CLI::Range(1, cairn::v1::kMaxSuggestionCount));
  suggest->add_option("--client-id", o_.client_id,
                      "worker id: asking again returns its ACTIVE trials");
  AddJson(suggest);
  On(suggest, TrialSuggest);
}

void CommandTree::AddTrialReport(CLI::App* trial) {
  CLI::App* report = trial->add_subcommand(
      "report", "add an intermediate measurement: name=value ...");
  AddStudyArg(report);
  AddTrialArg(report);
  report->add_option("--step", o_.step, "step count of the measurement")
      ->required();
  report
      ->add_option("--elapsed", o_.elapsed_seconds,
                   "elapsed seconds of the measurement")
      ->check(CLI::NonNegativeNumber);
  report->add_option("METRICS", o_.metrics, "metric values name=value")
      ->required();
  On(report, TrialReport);
}

void CommandTree::AddTrialComplete(CLI::App* trial) {
  CLI::App* complete = trial->add_subcommand(
      "complete",
      "finish a trial with final metrics name=value ..., as infeasible, or "
      "(with neither) with its last reported measurement");
  AddStudyArg(complete);
  AddTrialArg(complete);
  CLI::Option* values = complete->add_option("METRICS", o_.metrics,
                                             "final metric values name=value");
  CLI::Option* infeasible =
      complete->add_option("--infeasible", o_.infeasible_reason,
                           "mark the trial infeasible, with this reason");
  values->excludes(infeasible);
  complete->add_option("--step", o_.step, "step count of the final metrics");
  complete
      ->add_option("--elapsed", o_.elapsed_seconds,
                   "elapsed seconds of the final metrics")
      ->check(CLI::NonNegativeNumber);
  On(complete, TrialComplete);
}

void CommandTree::AddTrialHistory(CLI::App* trial) {
  CLI::App* history =
      trial->add_subcommand("history", "one metric's reported values by step");
  AddStudyArg(history);
  AddTrialArg(history);
  history->add_option("METRIC", o_.metric, "metric id")->required();
  AddJson(history);
  On(history, TrialHistory);
}

void CommandTree::AddTrialLogs(CLI::App* trial) {
  CLI::App* logs = trial->add_subcommand(
      "logs", "print the log of the training job that runs a trial");
  AddStudyArg(logs);
  AddTrialArg(logs);
  logs->add_flag("--follow,-f", o_.follow,
                 "keep printing until the job is finished");
  On(logs, TrialLogs);
}

// Runs the parsed command's handler; returns the exit code.
int RunHandler(Handler action, Context& c) {
  if (action == nullptr) {
    *c.err << "cairn: error: no command given; see cairn --help\n";
    return kExitUsage;
  }
  const absl::Status status = action(c);
  if (!status.ok()) {
    *c.err << "cairn: error: " << StatusToLine(status) << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

int RunCli(int argc, const char* const* argv, std::ostream& out,
           std::ostream& err) {
  Context c;
  c.out = &out;
  c.err = &err;
  Handler action = nullptr;
  CLI::App app{"cairn: drive Cairn studies and trials on a cairnd server.",
               "cairn"};
  CommandTree tree(c.opt, &action);
  tree.AddGlobalOptions(app);
  tree.AddStudyCommands(app);
  tree.AddTrialCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return RunHandler(action, c);
}

}  // namespace cairn::cli
