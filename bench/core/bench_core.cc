// cairn_bench_core: throughput of a running cairnd, measured from a gRPC
// client on this machine (bench/core/run.sh starts the server and compares
// with Optuna).
//
// Figures (printed as `key value` lines, rates per second):
//   cairn_suggest_complete_per_s[_cN]  SuggestTrials(count=1) + CompleteTrial
//                                      round trips, RANDOM_SEARCH, N clients
//   cairn_stream_measurements_per_s[_cN]  measurements through the
//                                      client-streaming ReportMeasurements,
//                                      counted once the server acknowledged
//                                      them durable (response received)
//   cairn_add_measurement_per_s        unary AddTrialMeasurement calls
//   cairn_suggest_complete_per_s_large  the same with 1 client on a study
//                                      already holding --large-study trials
//   cairn_suggest_ms[_cN], cairn_complete_ms[_cN]  mean latency of each RPC
//                                      of the round trip
//   floor_empty_rpc_us                 mean latency of an RPC that does no
//                                      work (GetStudy of a missing study);
//                                      figure "floors", or "empty_rpc" alone
//   floor_durable_append_us            mean latency of a 200-byte append plus
//                                      fdatasync() to a file in --fsync-dir
//   cairn_phase_us[_cN|_large] METHOD PHASE  with --metrics HOST:PORT (cairnd's
//                                      /metrics): the mean microseconds per
//                                      call of each part of SuggestTrials and
//                                      CompleteTrial (auth, limits,
//                                      study_lock, designer, append, sync,
//                                      audit; "server" is the whole call as
//                                      cairnd timed it) during the figure
// The two floors bound one sequential client: a round trip is two RPCs that
// each wait for one durable append, so it cannot beat
// 2 x (floor_empty_rpc_us + floor_durable_append_us) on this machine.
// Every write is durable (cairnd's default: WAL fsynced before the reply).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "auth/client_tls.h"
#include "auth/client_token.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"

namespace {

namespace v1 = cairn::v1;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string server = "127.0.0.1:50051";
  double duration = 5;
  std::vector<int> clients = {1, 8, 32};
  // Which figures to measure: round_trips, large_study, stream, unary,
  // floors, empty_rpc (the first floor alone).
  std::vector<std::string> figures = {"round_trips", "large_study", "stream",
                                      "unary", "floors"};
  // Directory (on the store's file system) for the durable-append floor.
  std::string fsync_dir = ".";
  // Trials in the study of the large_study figure.
  int64_t large_study = 10000;
  // cairnd's /metrics address, for the phases of each call ("": none).
  std::string metrics;

  bool Wants(const std::string& figure) const {
    return std::find(figures.begin(), figures.end(), figure) != figures.end();
  }
};

[[noreturn]] void Die(const std::string& what, const grpc::Status& status) {
  std::fprintf(stderr, "cairn_bench_core: %s failed: %d %s\n", what.c_str(),
               static_cast<int>(status.error_code()),
               status.error_message().c_str());
  std::exit(1);
}

// A channel of its own (own TCP connection), as separate workers would have.
// Sends the token of $CAIRN_TOKEN / $CAIRN_TOKEN_FILE (auth/client_token.h),
// over TLS when $CAIRN_TLS_CA (or _CERT/_KEY) is set (auth/client_tls.h).
std::unique_ptr<v1::StudyService::Stub> NewStub(const std::string& server) {
  static const std::string token = [] {
    const char* file = std::getenv("CAIRN_TOKEN_FILE");
    absl::StatusOr<std::string> t =
        cairn::auth::ReadClientToken(file != nullptr ? file : "");
    if (!t.ok()) {
      std::fprintf(stderr, "cairn_bench_core: %s\n",
                   std::string(t.status().message()).c_str());
      std::exit(1);
    }
    return *t;
  }();
  static const std::shared_ptr<grpc::ChannelCredentials> credentials = [] {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
        cairn::auth::NewClientChannelCredentials(
            cairn::auth::ClientTlsFilesFromEnv({}));
    if (!c.ok()) {
      std::fprintf(stderr, "cairn_bench_core: %s\n",
                   std::string(c.status().message()).c_str());
      std::exit(1);
    }
    return *c;
  }();
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return v1::StudyService::NewStub(
      cairn::auth::NewAuthChannel(server, token, credentials, args));
}

std::string CreateStudy(v1::StudyService::Stub& stub, const std::string& tag) {
  v1::CreateStudyRequest request;
  v1::Study* study = request.mutable_study();
  study->set_display_name(
      "bench-" + tag + "-" + std::to_string(::getpid()) + "-" +
      std::to_string(Clock::now().time_since_epoch().count()));
  v1::StudySpec* spec = study->mutable_spec();
  spec->set_algorithm(v1::StudySpec::RANDOM_SEARCH);
  spec->set_seed(1);
  for (auto [id, lo, hi] :
       {std::tuple<const char*, double, double>{"x1", -5, 10}, {"x2", 0, 15}}) {
    v1::ParameterSpec* p = spec->add_parameters();
    p->set_parameter_id(id);
    p->set_type(v1::ParameterSpec::DOUBLE);
    p->set_min_value(lo);
    p->set_max_value(hi);
  }
  v1::MetricSpec* m = spec->add_metrics();
  m->set_metric_id("loss");
  m->set_goal(v1::MetricSpec::MINIMIZE);
  grpc::ClientContext context;
  v1::Study created;
  grpc::Status status = stub.CreateStudy(&context, request, &created);
  if (!status.ok()) Die("CreateStudy", status);
  return created.name();
}

void DeleteStudy(v1::StudyService::Stub& stub, const std::string& name) {
  v1::DeleteStudyRequest request;
  request.set_name(name);
  grpc::ClientContext context;
  google::protobuf::Empty empty;
  stub.DeleteStudy(&context, request, &empty);  // Best effort.
}

v1::Trial Suggest(v1::StudyService::Stub& stub, const std::string& study,
                  const std::string& client_id) {
  v1::SuggestTrialsRequest request;
  request.set_parent(study);
  request.set_suggestion_count(1);
  request.set_client_id(client_id);
  grpc::ClientContext context;
  v1::SuggestTrialsResponse response;
  grpc::Status status = stub.SuggestTrials(&context, request, &response);
  if (!status.ok()) Die("SuggestTrials", status);
  if (response.trials_size() != 1) {
    std::fprintf(stderr,
                 "cairn_bench_core: SuggestTrials returned %d trials: %s\n",
                 response.trials_size(), response.message().c_str());
    std::exit(1);
  }
  return response.trials(0);
}

double Objective(const v1::Trial& trial) {
  double sum = 0;
  for (const auto& p : trial.parameters()) {
    sum += p.value().number_value() * p.value().number_value();
  }
  return sum;
}

// Runs `body(client_index, stop)` on n threads for `duration` seconds; each
// returns how many operations it finished. Returns operations per second.
template <typename Body>
double RunClients(int n, double duration, Body body) {
  std::atomic<bool> stop{false};
  std::vector<long> counts(n, 0);
  std::vector<double> ends(n, 0);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      counts[i] = body(i, stop);
      ends[i] = std::chrono::duration<double>(Clock::now() - start).count();
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(duration));
  stop = true;
  for (auto& t : threads) t.join();
  long total = 0;
  for (long c : counts) total += c;
  // The last operation of each client may end after the stop flag; divide by
  // the real time the clients ran.
  const double elapsed = *std::max_element(ends.begin(), ends.end());
  return total / elapsed;
}

// Sum and count of each call phase's histogram ("METHOD PHASE" keys; the
// whole call is "METHOD server"), from one scrape of `o.metrics` (none
// without one).
using PhaseTotals = std::map<std::string, std::pair<double, double>>;
PhaseTotals ScrapePhases(const Options& o);

// Mean latencies of the two RPCs of the round trip, summed over clients.
struct RoundTripLatency {
  std::atomic<int64_t> suggest_ns{0};
  std::atomic<int64_t> complete_ns{0};
  std::atomic<int64_t> count{0};
};

// One SuggestTrials(count=1) + CompleteTrial round trip; adds the latency of
// each RPC to `latency` when it is non-null.
void RoundTrip(v1::StudyService::Stub& stub, const std::string& study,
               const std::string& client_id, RoundTripLatency* latency) {
  const auto t0 = Clock::now();
  const v1::Trial trial = Suggest(stub, study, client_id);
  const auto t1 = Clock::now();
  v1::CompleteTrialRequest request;
  request.set_name(trial.name());
  v1::Metric* metric = request.mutable_final_measurement()->add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(Objective(trial));
  grpc::ClientContext context;
  v1::Trial done;
  grpc::Status status = stub.CompleteTrial(&context, request, &done);
  if (!status.ok()) Die("CompleteTrial", status);
  const auto t2 = Clock::now();
  if (latency != nullptr) {
    latency->suggest_ns += std::chrono::nanoseconds(t1 - t0).count();
    latency->complete_ns += std::chrono::nanoseconds(t2 - t1).count();
    ++latency->count;
  }
}

// Round trips per second of `clients` clients on `study`.
double RoundTripRate(const Options& o, const std::string& study, int clients,
                     RoundTripLatency* latency) {
  return RunClients(clients, o.duration, [&](int i, std::atomic<bool>& stop) {
    auto stub = NewStub(o.server);
    const std::string client_id = "bench-" + std::to_string(i);
    long n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      RoundTrip(*stub, study, client_id, latency);
      ++n;
    }
    return n;
  });
}

double SuggestCompleteRate(const Options& o, int clients,
                           RoundTripLatency* latency) {
  auto admin = NewStub(o.server);
  const std::string study = CreateStudy(*admin, "rt");
  const double rate = RoundTripRate(o, study, clients, latency);
  DeleteStudy(*admin, study);
  return rate;
}

// One-client round trips on a study that already holds `o.large_study`
// completed trials (filled by 8 clients), to show the cost of a call does
// not grow with the study.
// `*phases`: the phase totals once the study is filled.
double LargeStudyRate(const Options& o, RoundTripLatency* latency,
                      PhaseTotals* phases) {
  auto admin = NewStub(o.server);
  const std::string study = CreateStudy(*admin, "large");
  std::atomic<int64_t> left{o.large_study};
  std::vector<std::thread> fillers;
  for (int i = 0; i < 8; ++i) {
    fillers.emplace_back([&, i] {
      auto stub = NewStub(o.server);
      while (left.fetch_sub(1) > 0) {
        RoundTrip(*stub, study, "fill-" + std::to_string(i), nullptr);
      }
    });
  }
  for (auto& t : fillers) t.join();
  *phases = ScrapePhases(o);
  const double rate = RoundTripRate(o, study, 1, latency);
  DeleteStudy(*admin, study);
  return rate;
}

double StreamRate(const Options& o, int clients) {
  auto admin = NewStub(o.server);
  const std::string study = CreateStudy(*admin, "stream");
  std::vector<std::string> trials;
  for (int i = 0; i < clients; ++i) {
    trials.push_back(
        Suggest(*admin, study, "bench-" + std::to_string(i)).name());
  }
  const double rate =
      RunClients(clients, o.duration, [&](int i, std::atomic<bool>& stop) {
        auto stub = NewStub(o.server);
        grpc::ClientContext context;
        v1::ReportMeasurementsResponse response;
        auto writer = stub->ReportMeasurements(&context, &response);
        v1::ReportMeasurementsRequest request;
        request.set_trial_name(trials[i]);
        v1::Measurement* m = request.mutable_measurement();
        v1::Metric* metric = m->add_metrics();
        metric->set_metric_id("loss");
        long sent = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          m->set_step_count(sent);
          metric->set_value(1.0 / (sent + 1));
          if (!writer->Write(request)) break;
          ++sent;
        }
        writer->WritesDone();
        grpc::Status status = writer->Finish();
        if (!status.ok()) Die("ReportMeasurements", status);
        if (response.measurements_written() != sent) {
          std::fprintf(
              stderr,
              "cairn_bench_core: sent %ld measurements, server wrote %lld\n",
              sent, static_cast<long long>(response.measurements_written()));
          std::exit(1);
        }
        return sent;
      });
  DeleteStudy(*admin, study);
  return rate;
}

double AddMeasurementRate(const Options& o) {
  auto admin = NewStub(o.server);
  const std::string study = CreateStudy(*admin, "unary");
  const std::string trial = Suggest(*admin, study, "bench-0").name();
  const double rate =
      RunClients(1, o.duration, [&](int, std::atomic<bool>& stop) {
        auto stub = NewStub(o.server);
        v1::AddTrialMeasurementRequest request;
        request.set_trial_name(trial);
        v1::Metric* metric = request.mutable_measurement()->add_metrics();
        metric->set_metric_id("loss");
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          request.mutable_measurement()->set_step_count(n);
          metric->set_value(1.0 / (n + 1));
          grpc::ClientContext context;
          v1::Trial out;
          grpc::Status status =
              stub->AddTrialMeasurement(&context, request, &out);
          if (!status.ok()) Die("AddTrialMeasurement", status);
          ++n;
        }
        return n;
      });
  DeleteStudy(*admin, study);
  return rate;
}

// Mean latency in microseconds of an RPC that does no work: GetStudy of a
// study that does not exist (cairnd answers NOT_FOUND from memory).
double EmptyRpcMicros(const Options& o) {
  auto stub = NewStub(o.server);
  v1::GetStudyRequest request;
  request.set_name("studies/999999999");
  const double rate =
      RunClients(1, o.duration, [&](int, std::atomic<bool>& stop) {
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          grpc::ClientContext context;
          v1::Study study;
          grpc::Status status = stub->GetStudy(&context, request, &study);
          if (status.error_code() != grpc::StatusCode::NOT_FOUND) {
            Die("GetStudy of a missing study (expected NOT_FOUND)", status);
          }
          ++n;
        }
        return n;
      });
  return 1e6 / rate;
}

// Mean latency in microseconds of appending 200 bytes to a preallocated file
// in `dir` and fdatasync()ing it: what one durable WAL commit costs the disk.
double DurableAppendMicros(const Options& o) {
  std::string path = o.fsync_dir + "/cairn-bench-fsync.XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    std::fprintf(stderr, "cairn_bench_core: --fsync-dir %s: %s\n",
                 o.fsync_dir.c_str(), std::strerror(errno));
    std::exit(1);
  }
  ::unlink(path.c_str());
  constexpr off_t kFileBytes = 64 << 20;
  if (::posix_fallocate(fd, 0, kFileBytes) != 0) {
    std::fprintf(stderr, "cairn_bench_core: cannot preallocate in %s\n",
                 o.fsync_dir.c_str());
    std::exit(1);
  }
  char record[200];
  std::memset(record, 'r', sizeof(record));
  const double rate =
      RunClients(1, o.duration, [&](int, std::atomic<bool>& stop) {
        long n = 0;
        for (off_t offset = 0; !stop.load(std::memory_order_relaxed) &&
                               offset + sizeof(record) <= kFileBytes;
             offset += sizeof(record), ++n) {
          if (::pwrite(fd, record, sizeof(record), offset) != sizeof(record) ||
              ::fdatasync(fd) != 0) {
            std::fprintf(stderr, "cairn_bench_core: durable append: %s\n",
                         std::strerror(errno));
            std::exit(1);
          }
        }
        return n;
      });
  ::close(fd);
  return 1e6 / rate;
}

PhaseTotals ScrapePhases(const Options& o) {
  PhaseTotals totals;
  if (o.metrics.empty()) return totals;
  httplib::Client client("http://" + o.metrics);
  httplib::Result got = client.Get("/metrics");
  if (!got || got->status != 200) {
    std::fprintf(stderr, "cairn_bench_core: cannot read http://%s/metrics\n",
                 o.metrics.c_str());
    std::exit(1);
  }
  static const std::regex phase(
      R"re(^cairn_call_phase_duration_seconds_(sum|count)\{method="(\w+)",phase="(\w+)"\} (\S+))re");
  static const std::regex rpc(
      R"re(^cairn_grpc_request_duration_seconds_(sum|count)\{method="(\w+)"\} (\S+))re");
  std::istringstream lines(got->body);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    std::string key, which, value;
    if (std::regex_match(line, m, phase)) {
      which = m[1], key = m[2].str() + " " + m[3].str(), value = m[4];
    } else if (std::regex_match(line, m, rpc)) {
      which = m[1], key = m[2].str() + " server", value = m[3];
    } else {
      continue;
    }
    auto& [sum, count] = totals[key];
    (which == "sum" ? sum : count) = std::strtod(value.c_str(), nullptr);
  }
  return totals;
}

// Prints the mean microseconds per call of each phase of SuggestTrials and
// CompleteTrial between two scrapes, in the order the parts run.
void PrintPhases(const PhaseTotals& before, const PhaseTotals& after,
                 const std::string& suffix) {
  for (const char* method : {"SuggestTrials", "CompleteTrial"}) {
    for (const char* phase : {"auth", "limits", "study_lock", "designer",
                              "append", "sync", "audit", "server"}) {
      const std::string key = std::string(method) + " " + phase;
      auto now = after.find(key);
      if (now == after.end()) continue;
      auto was = before.find(key);
      const auto [sum0, n0] =
          was == before.end() ? std::pair<double, double>{0, 0} : was->second;
      const double n = now->second.second - n0;
      if (n <= 0) continue;
      std::printf("cairn_phase_us%s %s %.1f\n", suffix.c_str(), key.c_str(),
                  1e6 * (now->second.first - sum0) / n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"cairn_bench_core: throughput of a running cairnd"};
  app.add_option("--server", o.server, "cairnd address HOST:PORT")
      ->capture_default_str();
  app.add_option("--duration", o.duration, "seconds per figure")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--clients", o.clients,
                 "concurrent client counts to measure (default 1 8 32)")
      ->check(CLI::Range(1, 256));
  app.add_option("--figures", o.figures, "figures to measure (default: all)")
      ->check(CLI::IsMember({"round_trips", "large_study", "stream", "unary",
                             "floors", "empty_rpc"}));
  app.add_option("--fsync-dir", o.fsync_dir,
                 "directory for the durable-append floor (use the store's "
                 "file system)")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  app.add_option("--large-study", o.large_study,
                 "trials in the study of the large_study figure")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}));
  app.add_option("--metrics", o.metrics,
                 "cairnd's /metrics address HOST:PORT: print the phases of "
                 "each call");
  CLI11_PARSE(app, argc, argv);

  for (int c : o.clients) {
    if (!o.Wants("round_trips")) break;
    const std::string suffix = c == 1 ? "" : "_c" + std::to_string(c);
    RoundTripLatency latency;
    const PhaseTotals before = ScrapePhases(o);
    std::printf("cairn_suggest_complete_per_s%s %.1f\n", suffix.c_str(),
                SuggestCompleteRate(o, c, &latency));
    PrintPhases(before, ScrapePhases(o), suffix);
    const double n = std::max<int64_t>(1, latency.count.load());
    std::printf("cairn_suggest_ms%s %.3f\ncairn_complete_ms%s %.3f\n",
                suffix.c_str(), latency.suggest_ns / n / 1e6, suffix.c_str(),
                latency.complete_ns / n / 1e6);
    std::fflush(stdout);
  }
  if (o.Wants("large_study")) {
    RoundTripLatency latency;
    PhaseTotals filled;
    std::printf("cairn_suggest_complete_per_s_large %.1f\n",
                LargeStudyRate(o, &latency, &filled));
    PrintPhases(filled, ScrapePhases(o), "_large");
    const double n = std::max<int64_t>(1, latency.count.load());
    std::printf("cairn_large_study_trials %lld\n",
                static_cast<long long>(o.large_study));
    std::printf("cairn_suggest_ms_large %.3f\ncairn_complete_ms_large %.3f\n",
                latency.suggest_ns / n / 1e6, latency.complete_ns / n / 1e6);
    std::fflush(stdout);
  }
  for (int c : o.clients) {
    if (!o.Wants("stream")) break;
    const std::string suffix = c == 1 ? "" : "_c" + std::to_string(c);
    std::printf("cairn_stream_measurements_per_s%s %.1f\n", suffix.c_str(),
                StreamRate(o, c));
    std::fflush(stdout);
  }
  if (o.Wants("unary")) {
    std::printf("cairn_add_measurement_per_s %.1f\n", AddMeasurementRate(o));
    std::fflush(stdout);
  }
  if (o.Wants("floors") || o.Wants("empty_rpc")) {
    std::printf("floor_empty_rpc_us %.1f\n", EmptyRpcMicros(o));
  }
  if (o.Wants("floors")) {
    std::printf("floor_durable_append_us %.1f\n", DurableAppendMicros(o));
  }
  return 0;
}
