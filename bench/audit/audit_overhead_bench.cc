// Cost of the audit log on a write RPC, printed side by side.
//
//   audit_overhead_bench [--slices=N] [--calls=N] [--threads=N]
//
// Starts two cairnds in this process, each on its own store under $TMPDIR
// (tokens on, as by default): one with the audit log (the default), one
// without (CairndOptions::audit = false). Each gets a study and a trial;
// clients then call AddTrialMeasurement (a durable write, so audited) in
// short slices, alternating between the two servers, first one client at a
// time (latency: the audit record is a second synced write after the
// call's own) and then --threads clients at once (throughput: the group
// commit shares fsyncs). Prints the median per-slice figures and the ratio.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/client_token.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "server/cairnd.h"

namespace cairn {
namespace {

using SteadyClock = std::chrono::steady_clock;
namespace v1 = cairn::v1;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Flag(int argc, char** argv, const std::string& name, int fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(prefix, 0) == 0)
      return std::atoi(arg.c_str() + prefix.size());
  }
  return fallback;
}

// One cairnd with a study and a trial to report on.
struct Target {
  std::string name;
  std::unique_ptr<Cairnd> server;
  std::shared_ptr<grpc::Channel> channel;
  std::string trial;
};

Target Start(const std::string& name, const std::string& dir, bool audit) {
  CairndOptions options;
  options.data_dir = dir;
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "";
  options.http_listen = "";
  options.gpus = 0;
  options.audit = audit;
  Target t{name, *Cairnd::Start(options), nullptr, ""};
  std::string token;
  std::getline(std::ifstream(dir + "/admin.token"), token);
  t.channel = auth::NewAuthChannel(
      "127.0.0.1:" + std::to_string(t.server->port()), token);
  auto stub = v1::StudyService::NewStub(t.channel);
  v1::CreateStudyRequest create;
  create.mutable_study()->set_display_name("bench");
  auto* spec = create.mutable_study()->mutable_spec();
  auto* x = spec->add_parameters();
  x->set_parameter_id("x");
  x->set_type(v1::ParameterSpec::DOUBLE);
  x->set_min_value(0);
  x->set_max_value(1);
  auto* metric = spec->add_metrics();
  metric->set_metric_id("loss");
  metric->set_goal(v1::MetricSpec::MINIMIZE);
  v1::Study study;
  grpc::ClientContext c1;
  if (!stub->CreateStudy(&c1, create, &study).ok()) std::abort();
  v1::SuggestTrialsRequest suggest;
  suggest.set_parent(study.name());
  suggest.set_suggestion_count(1);
  v1::SuggestTrialsResponse suggested;
  grpc::ClientContext c2;
  if (!stub->SuggestTrials(&c2, suggest, &suggested).ok()) std::abort();
  t.trial = suggested.trials(0).name();
  return t;
}

// Calls/second of `threads` clients making `calls` reports each.
double Slice(const Target& t, int threads, int calls, std::atomic<int>* step) {
  const auto start = SteadyClock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < threads; ++c) {
    clients.emplace_back([&] {
      auto stub = v1::StudyService::NewStub(t.channel);
      for (int i = 0; i < calls; ++i) {
        v1::AddTrialMeasurementRequest request;
        request.set_trial_name(t.trial);
        auto* m = request.mutable_measurement();
        m->set_step_count(step->fetch_add(1));
        auto* metric = m->add_metrics();
        metric->set_metric_id("loss");
        metric->set_value(0.5);
        v1::Trial out;
        grpc::ClientContext ctx;
        if (!stub->AddTrialMeasurement(&ctx, request, &out).ok()) std::abort();
      }
    });
  }
  for (auto& c : clients) c.join();
  const double seconds =
      std::chrono::duration<double>(SteadyClock::now() - start).count();
  return threads * calls / seconds;
}

void Compare(Target& on, Target& off, int slices, int threads, int calls) {
  std::atomic<int> step_on{1};
  std::atomic<int> step_off{1};
  std::vector<double> rate_on, rate_off, ratio;
  for (int s = 0; s < slices; ++s) {
    const double a = Slice(off, threads, calls, &step_off);
    const double b = Slice(on, threads, calls, &step_on);
    rate_off.push_back(a);
    rate_on.push_back(b);
    ratio.push_back(a / b);
  }
  std::printf(
      "%2d client(s): audit off %8.0f calls/s (%6.3f ms/call)  audit on "
      "%8.0f calls/s (%6.3f ms/call)  time ratio on/off %.2f\n",
      threads, Median(rate_off), threads * 1e3 / Median(rate_off),
      Median(rate_on), threads * 1e3 / Median(rate_on), Median(ratio));
}

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) {
  const int slices = cairn::Flag(argc, argv, "slices", 15);
  const int calls = cairn::Flag(argc, argv, "calls", 100);
  const int threads = cairn::Flag(argc, argv, "threads", 8);
  const char* tmp = std::getenv("TMPDIR");
  const std::string root = std::string(tmp != nullptr ? tmp : "/tmp") +
                           "/cairn-audit-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(root);
  {
    cairn::Target on = cairn::Start("on", root + "/on", true);
    cairn::Target off = cairn::Start("off", root + "/off", false);
    std::printf(
        "AddTrialMeasurement (a synced write), %d slices of %d calls per "
        "client, medians; store under %s\n",
        slices, calls, root.c_str());
    cairn::Compare(on, off, slices, 1, calls);
    cairn::Compare(on, off, slices, threads, calls / 4 + 1);
  }
  std::filesystem::remove_all(root);
  return 0;
}
