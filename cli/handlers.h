// The handlers behind the cairn subcommands, and what they run on: the
// options the command line sets (Options) and the per-run Context. Private to
// cli/: commands.cc builds the command tree that picks a handler, and
// study_handlers.cc / trial_handlers.cc / admin_handlers.cc implement them.
#ifndef CAIRN_CLI_HANDLERS_H_
#define CAIRN_CLI_HANDLERS_H_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "auth/client_tls.h"
#include "cli/client.h"

namespace cairn::cli {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

// Everything the command line sets; handlers read it after parsing.
struct Options {
  std::string server = kDefaultServer;
  double timeout_seconds = 30;
  bool json = false;
  bool csv = false;  // trial list --csv.

  std::string config;
  std::string display_name;
  std::string study;
  std::string trial;
  std::string metric;
  std::string state;
  // study label: KEY=VALUE arguments and --remove KEY.
  std::vector<std::string> label_pairs;
  std::vector<std::string> remove_labels;
  std::vector<std::string> metrics;
  int count = 1;
  std::string client_id;
  int64_t step = 0;
  double elapsed_seconds = -1;
  std::string infeasible_reason;
  bool follow = false;
  std::string replica;  // trial logs --replica
  double interval_seconds = 2;
  // study wait: give up when cairnd stays unreachable this long.
  double reconnect_seconds = 600;
  std::string destination;
  // Where the token comes from (--token-file / $CAIRN_TOKEN_FILE), and the
  // token itself, resolved before the handler runs (auth/client_token.h).
  std::string token_file;
  std::string token;
  // TLS files (--tls-ca, --tls-cert, --tls-key, each else $CAIRN_TLS_*),
  // and the channel credentials made from them before the handler runs.
  auth::ClientTlsFiles tls;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // cairn token create.
  std::string token_name;
  std::string token_role;
  std::string token_expires;
  bool token_aws = false;
  // cairn audit list.
  std::string audit_since;
  std::string audit_principal;
  // trial history: GetMetricHistoryRequest fields (0 / unset: defaults).
  int page_size = 0;
  int max_points = 0;
  std::optional<int64_t> start_step;
  std::optional<int64_t> end_step;
  // cairn jobs (job_handlers.cc): gcloud ai-platform jobs' flags.
  std::string job_id;
  std::string module_name;
  std::string package_path;
  std::vector<std::string> packages;
  std::string job_dir;
  std::string scale_tier;
  std::vector<std::string> labels;
  bool stream_logs = false;
  std::vector<std::string> user_args;
  std::string filter;
  // Accepted and reported as ignored (one machine).
  std::string region;
  std::string runtime_version;
  std::string python_version;
  // Custom containers (as gcloud names the flags): each sets
  // <group>Config.imageUri.
  std::string master_image_uri;
  std::string worker_image_uri;
  std::string parameter_server_image_uri;
};

// One run of the command line: its options, where output and diagnostics go,
// and the StudyClient, connected on first use. Not thread-safe.
struct Context {
  Options opt;
  std::ostream* out;
  std::ostream* err;
  // Whether *out is a terminal (progress lines are then updated in place).
  bool out_is_terminal = false;
  std::unique_ptr<StudyClient> client;

  StudyClient& Client() {
    if (!client) {
      client = std::make_unique<StudyClient>(
          opt.server,
          std::chrono::milliseconds(
              static_cast<int64_t>(std::llround(opt.timeout_seconds * 1000))),
          opt.token, opt.credentials);
    }
    return *client;
  }
};

// A command's handler, run after parsing. Each resolves its arguments, makes
// its RPCs through c.Client(), prints the result to *c.out and returns OK, or
// returns the first error (printed by RunCli).
using Handler = absl::Status (*)(Context&);

// cairn study <verb>.
absl::Status StudyCreate(Context& c);
absl::Status StudyList(Context& c);
absl::Status StudyGet(Context& c);
absl::Status StudyDelete(Context& c);
absl::Status StudyBest(Context& c);
absl::Status StudySetState(Context& c);
// Polls the study until it leaves ACTIVE, printing a progress line whenever
// it changes: trials done/total, running, best so far.
absl::Status StudyWait(Context& c);
// Stops a study: no new trials, and cairnd cancels its running jobs.
absl::Status StudyStop(Context& c);
// Sets and removes a study's labels (UpdateStudyLabels).
absl::Status StudyLabel(Context& c);

// cairn trial <verb>.
// Prints a trial's job log; with --follow, keeps printing until the job is
// finished.
absl::Status TrialLogs(Context& c);
absl::Status TrialSuggest(Context& c);
absl::Status TrialReport(Context& c);
absl::Status TrialComplete(Context& c);
absl::Status TrialList(Context& c);
absl::Status TrialGet(Context& c);
absl::Status TrialStop(Context& c);
absl::Status TrialHistory(Context& c);

// cairn jobs <verb> (job_handlers.cc): AI Platform Training jobs, as
// gcloud ai-platform jobs does them. submit reads --config (AI Platform's
// own format), applies the flags over it, sends the package's files and
// prints "Job [ID] submitted successfully."; with --stream-logs it then
// follows the logs until the job ends (exit 1 unless it SUCCEEDED).
absl::Status JobSubmit(Context& c);
absl::Status JobDescribe(Context& c);
absl::Status JobList(Context& c);
absl::Status JobCancel(Context& c);
// Follows every trial's log, each line prefixed "[trial N] ", until the job
// has ended and every log is read.
absl::Status JobStreamLogs(Context& c);

// cairn backup DEST: asks cairnd to back its store up into DEST, a path on
// the cairnd machine, and prints what the backup holds.
absl::Status Backup(Context& c);

// cairn token <verb> (token_handlers.cc; admin only on the server).
// create prints the new secret alone on stdout, once.
absl::Status TokenCreate(Context& c);
absl::Status TokenList(Context& c);
absl::Status TokenRevoke(Context& c);

// cairn audit list (audit_handlers.cc; admin only on the server): every
// page, oldest first; --json prints one object per line.
absl::Status AuditList(Context& c);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_HANDLERS_H_
