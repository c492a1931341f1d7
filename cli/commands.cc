// The cairn command tree: global options, the study, trial and backup
// subcommands with their flags and help text, and RunCli, which parses argv
// and runs the chosen handler (see handlers.h); errors travel back as
// absl::Status and become one "cairn: error:" line.
#include "cli/commands.h"

#include <unistd.h>

#include <iostream>
#include <limits>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "auth/client_tls.h"
#include "auth/client_token.h"
#include "cli/args.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "util/flags/flag_validators.h"

namespace cairn::cli {
namespace {

// The largest step a measurement may have.
constexpr int64_t kMaxStep = std::numeric_limits<int64_t>::max();

// Builds the CLI11 command tree: options write into `opt`, and the chosen
// subcommand records its handler in *action.
class CommandTree {
 public:
  CommandTree(Options& opt, Handler* action) : o_(opt), action_(action) {}

  void AddGlobalOptions(CLI::App& app);
  void AddStudyCommands(CLI::App& app);
  void AddTrialCommands(CLI::App& app);
  void AddAdminCommands(CLI::App& app);
  void AddTokenCommands(CLI::App& app);
  void AddAuditCommands(CLI::App& app);
  void AddJobCommands(CLI::App& app);

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
    sub->add_flag("--json", o_.json,
                  "print the protobuf JSON mapping of the reply instead of a "
                  "table");
  }

  void AddJobSubmit(CLI::App* jobs);
  void AddJobIdArg(CLI::App* sub) {
    sub->add_option("JOB_ID", o_.job_id, "the job's id")->required();
  }
  void AddStudyCreate(CLI::App* study);
  void AddStudySetState(CLI::App* study);
  void AddStudyWait(CLI::App* study);
  void AddStudyLabel(CLI::App* study);
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
      "SECONDS or DURATION (default 30), --token-file FILE (or "
      "$CAIRN_TOKEN_FILE; "
      "$CAIRN_TOKEN wins over both; default ~/.config/cairn/token), --tls-ca "
      "FILE, --tls-cert FILE, --tls-key FILE (or $CAIRN_TLS_CA, "
      "$CAIRN_TLS_CERT, $CAIRN_TLS_KEY; any of them turns TLS on).\nSTUDY is "
      "studies/N, N or a display name; TRIAL "
      "is M or studies/N/trials/M.");
  app.add_option("--server", o_.server,
                 "cairnd address HOST:PORT (default $CAIRN_SERVER, else " +
                     std::string(kDefaultServer) + ")")
      ->envname("CAIRN_SERVER");
  app.add_option("--token-file", o_.token_file,
                 "file holding the token to send (default $CAIRN_TOKEN_FILE, "
                 "else ~/.config/cairn/token; $CAIRN_TOKEN wins over both)")
      ->envname("CAIRN_TOKEN_FILE");
  app.add_option("--tls-ca", o_.tls.ca,
                 "connect with TLS, trusting the CA certificates in FILE "
                 "(default $CAIRN_TLS_CA)")
      ->envname("CAIRN_TLS_CA");
  app.add_option("--tls-cert", o_.tls.cert,
                 "client certificate for a cairnd that requires one (mTLS; "
                 "default $CAIRN_TLS_CERT; turns TLS on)")
      ->envname("CAIRN_TLS_CERT");
  app.add_option("--tls-key", o_.tls.key,
                 "private key of --tls-cert (default $CAIRN_TLS_KEY)")
      ->envname("CAIRN_TLS_KEY");
  app.add_option("--timeout", o_.timeout_seconds,
                 "RPC deadline: seconds or a duration such as 2m (default 30)")
      ->transform(util::flags::SecondsFlag());
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
  AddJson(get);  // Accepted for symmetry: the output is JSON either way.
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
  AddStudyLabel(study);

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

void CommandTree::AddStudyLabel(CLI::App* study) {
  CLI::App* label = study->add_subcommand(
      "label", "set (KEY=VALUE) and remove (--remove KEY) a study's labels");
  AddStudyArg(label);
  label->add_option("LABELS", o_.label_pairs, "KEY=VALUE to add or replace");
  label->add_option("--remove", o_.remove_labels, "KEY to remove (repeatable)");
  On(label, StudyLabel);
}

void CommandTree::AddStudyWait(CLI::App* study) {
  CLI::App* wait = study->add_subcommand(
      "wait",
      "show progress (trials done/total, running, failed, best so far) until "
      "the study is done, reconnecting while cairnd restarts; exits 1 if it "
      "failed");
  AddStudyArg(wait);
  wait->add_option("--interval", o_.interval_seconds,
                   "time between polls: seconds or a duration such as 10s "
                   "(default 2)")
      ->transform(util::flags::SecondsFlag());
  wait->add_option("--reconnect-timeout", o_.reconnect_seconds,
                   "how long to keep reconnecting while cairnd is unreachable:"
                   " seconds or a duration such as 5m (default 600)")
      ->transform(util::flags::SecondsFlag());
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
  list->add_flag("--csv", o_.csv,
                 "print CSV: one row per trial, parameters and final "
                 "metrics as columns")
      ->excludes("--json");
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
                                cairn::api::kMaxSuggestionCount,
                                " as cairnd allows (default 1)"))
      ->transform(util::flags::IntegerFlag(1, cairn::api::kMaxSuggestionCount));
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
      ->required()
      ->transform(util::flags::IntegerFlag(0, kMaxStep));
  report
      ->add_option("--elapsed", o_.elapsed_seconds,
                   "elapsed time of the measurement: seconds or a duration")
      ->transform(util::flags::SecondsFlag(/*allow_zero=*/true));
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
  complete->add_option("--step", o_.step, "step count of the final metrics")
      ->transform(util::flags::IntegerFlag(0, kMaxStep));
  complete
      ->add_option("--elapsed", o_.elapsed_seconds,
                   "elapsed time of the final metrics: seconds or a duration")
      ->transform(util::flags::SecondsFlag(/*allow_zero=*/true));
  On(complete, TrialComplete);
}

void CommandTree::AddTrialHistory(CLI::App* trial) {
  CLI::App* history = trial->add_subcommand(
      "history", "one metric's reported values, streamed page by page");
  AddStudyArg(history);
  AddTrialArg(history);
  history->add_option("METRIC", o_.metric, "metric id")->required();
  history
      ->add_option_function<int64_t>(
          "--start-step", [this](int64_t v) { o_.start_step = v; },
          "only steps >= this")
      ->transform(util::flags::IntegerFlag(0, kMaxStep));
  history
      ->add_option_function<int64_t>(
          "--end-step", [this](int64_t v) { o_.end_step = v; },
          "only steps <= this")
      ->transform(util::flags::IntegerFlag(0, kMaxStep));
  history
      ->add_option("--max-points", o_.max_points,
                   "downsample to at most this many points (2-100000)")
      ->transform(util::flags::IntegerFlag(0, cairn::api::kMaxHistoryPageSize));
  history
      ->add_option("--page-size", o_.page_size,
                   "points per request (default 10000, at most 100000)")
      ->transform(util::flags::IntegerFlag(0, cairn::api::kMaxHistoryPageSize));
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
  logs->add_option("--replica", o_.replica,
                   "another replica's log of a multi-replica trial, e.g. "
                   "worker-replica-1 (default: the master's)");
  On(logs, TrialLogs);
}

void CommandTree::AddAdminCommands(CLI::App& app) {
  CLI::App* backup = app.add_subcommand(
      "backup",
      "back cairnd's store up into DEST while it serves writes (admin)");
  backup
      ->add_option("DEST", o_.destination,
                   "absolute path ON THE CAIRND MACHINE: a new or empty "
                   "directory outside cairnd's data dir; restore with "
                   "cairnd --data-dir DEST")
      ->required();
  AddJson(backup);
  On(backup, Backup);
  AddTokenCommands(app);
  AddAuditCommands(app);
}

void CommandTree::AddTokenCommands(CLI::App& app) {
  CLI::App* token = app.add_subcommand(
      "token", "create, list and revoke the tokens cairnd accepts (admin)");
  token->require_subcommand(1);
  CLI::App* create = token->add_subcommand(
      "create", "create a token; prints its secret alone, once");
  create->add_option("--name", o_.token_name, "unique name, [A-Za-z0-9._-]")
      ->required();
  create->add_option("--role", o_.token_role, "viewer, editor or admin")
      ->required();
  create->add_option("--expires", o_.token_expires,
                     "lifetime, e.g. 90m, 12h, 30d (default: never)");
  create->add_flag("--aws", o_.token_aws,
                   "print the token's AWS access key pair as an AWS "
                   "credentials-file stanza (the only stdout, for >> "
                   "~/.aws/credentials); the token's secret goes to stderr");
  On(create, TokenCreate);
  CLI::App* list = token->add_subcommand(
      "list", "names, roles, created, expires, last used (never secrets)");
  AddJson(list);
  On(list, TokenList);
  CLI::App* revoke =
      token->add_subcommand("revoke", "revoke a token, effective at once");
  revoke->add_option("NAME", o_.token_name, "the token's name")->required();
  On(revoke, TokenRevoke);
}

void CommandTree::AddAuditCommands(CLI::App& app) {
  CLI::App* audit = app.add_subcommand(
      "audit", "the audit log: who changed what, and refused calls (admin)");
  audit->require_subcommand(1);
  CLI::App* list = audit->add_subcommand(
      "list",
      "audit events, oldest first: time, principal, role, method, "
      "resource, code, peer");
  list->add_option("--since", o_.audit_since,
                   "only the last DURATION, e.g. 90m, 12h, 7d");
  list->add_option("--principal", o_.audit_principal,
                   "only the calls of this token name");
  list->add_flag("--json", o_.json, "print one JSON object per line");
  On(list, AuditList);
}

void CommandTree::AddJobCommands(CLI::App& app) {
  CLI::App* jobs = app.add_subcommand(
      "jobs",
      "AI Platform Training jobs: submit training, describe, list, cancel, "
      "stream-logs (as gcloud ai-platform jobs)");
  jobs->require_subcommand(1);
  AddJobSubmit(jobs);
  CLI::App* describe = jobs->add_subcommand(
      "describe", "print the Job resource (AI Platform's field names)");
  AddJobIdArg(describe);
  describe->add_flag("--json", o_.json, "print the Job resource as JSON");
  On(describe, JobDescribe);
  CLI::App* list =
      jobs->add_subcommand("list", "list jobs: id, state, created");
  list->add_option("--filter", o_.filter,
                   "AI Platform's list filter: terms jobId:PREFIX*, "
                   "state:STATE, labels.KEY=VALUE joined by AND");
  list->add_flag("--json", o_.json, "print a JSON array of Job resources");
  On(list, JobList);
  CLI::App* cancel = jobs->add_subcommand(
      "cancel", "cancel a job: CANCELLING until its processes ended");
  AddJobIdArg(cancel);
  On(cancel, JobCancel);
  CLI::App* logs = jobs->add_subcommand(
      "stream-logs", "follow every trial's log until the job ends");
  AddJobIdArg(logs);
  On(logs, JobStreamLogs);
}

void CommandTree::AddJobSubmit(CLI::App* jobs) {
  CLI::App* submit = jobs->add_subcommand("submit", "submit a job");
  submit->require_subcommand(1);
  CLI::App* training = submit->add_subcommand(
      "training",
      "submit a training job: JOB_ID --config config.yaml [flags] [-- "
      "USER_ARGS...]; flags override the config");
  AddJobIdArg(training);
  training->add_option("USER_ARGS", o_.user_args,
                       "after --: arguments for the program (replace the "
                       "config's trainingInput.args)");
  training->add_option("--config", o_.config,
                       "AI Platform job config (YAML or JSON): trainingInput, "
                       "labels");
  training->add_option("--module-name", o_.module_name,
                       "Python module to run (python3 -m MODULE)");
  training->add_option("--package-path", o_.package_path,
                       "directory of the Python package (copied at submit)");
  // One value per flag, so that a `--` after it starts USER_ARGS.
  training
      ->add_option("--packages", o_.packages,
                   "package archives (tar, tar.gz), comma-separated")
      ->allow_extra_args(false);
  training->add_option("--job-dir", o_.job_dir,
                       "job dir on the cairnd machine (default "
                       "<jobs-root>/JOB_ID; a relative one lies in the jobs "
                       "root); trials of a tuning job use JOB_DIR/TRIAL_ID");
  training->add_option("--scale-tier", o_.scale_tier,
                       "BASIC, BASIC_GPU, STANDARD_1, PREMIUM_1 or CUSTOM");
  training->add_option("--labels", o_.labels, "KEY=VALUE,...")
      ->allow_extra_args(false);
  training->add_option("--region", o_.region,
                       "accepted and ignored (one machine)");
  training->add_option("--runtime-version", o_.runtime_version,
                       "accepted and ignored (one machine)");
  training->add_option("--python-version", o_.python_version,
                       "accepted and ignored (one machine)");
  training->add_option("--master-image-uri", o_.master_image_uri,
                       "run the master in this container image (podman's "
                       "local store) instead of a Python package");
  training->add_option("--worker-image-uri", o_.worker_image_uri,
                       "the workers' image (default: the master's)");
  training->add_option("--parameter-server-image-uri",
                       o_.parameter_server_image_uri,
                       "the parameter servers' image (default: the master's)");
  training->add_flag("--stream-logs", o_.stream_logs,
                     "follow the logs until the job ends");
  On(training, JobSubmit);
}

// Runs the parsed command's handler; returns the exit code.
int RunHandler(Handler action, Context& c) {
  if (action == nullptr) {
    *c.err << "cairn: error: no command given; see cairn --help\n";
    return kExitUsage;
  }
  absl::StatusOr<std::string> token = auth::ReadClientToken(c.opt.token_file);
  if (!token.ok()) {
    *c.err << "cairn: error: " << StatusToLine(token.status()) << "\n";
    return kExitError;
  }
  c.opt.token = *std::move(token);
  if (absl::Status s = CheckServerAddress(c.opt.server); !s.ok()) {
    *c.err << "cairn: error: " << StatusToLine(s) << "\n";
    return kExitError;
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      auth::NewClientChannelCredentials(c.opt.tls);
  if (!credentials.ok()) {
    *c.err << "cairn: error: " << StatusToLine(credentials.status()) << "\n";
    return kExitError;
  }
  c.opt.credentials = *std::move(credentials);
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
  c.out_is_terminal = &out == &std::cout && isatty(STDOUT_FILENO) == 1;
  Handler action = nullptr;
  CLI::App app{"cairn: drive Cairn studies and trials on a cairnd server.",
               "cairn"};
  CommandTree tree(c.opt, &action);
  tree.AddGlobalOptions(app);
  tree.AddStudyCommands(app);
  tree.AddTrialCommands(app);
  tree.AddAdminCommands(app);
  tree.AddJobCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return RunHandler(action, c);
}

}  // namespace cairn::cli
