// Crash test: a real cairnd on loopback, several concurrent gRPC clients
// (create studies, suggest, report measurements, complete trials) and a
// kill -9 of cairnd every 0.5-3 s (seeded), restarted on the same data dir.
// After each restart the clients pause and every write the server ever
// acknowledged is checked against it (see CrashClient::Verify); once more at
// the end. Prints one summary line: seed, kills, acknowledged writes
// verified.
//
// CAIRN_CRASH_SECONDS: how long to run (default 120). CAIRN_CRASH_SEED: the
// seed of the kill schedule and the clients' choices (default random; it is
// printed, so a failure's schedule can be rerun; thread timing still
// varies). bench/crash/run.sh runs it for longer.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/integration/crash_client.h"
#include "tests/testing/test_util.h"

namespace cairn::testing {
namespace {

using Stub = cairn::v1::StudyService::Stub;

constexpr int kClients = 4;

struct CrashConfig {
  int seconds = 120;
  uint64_t seed = 0;
};

CrashConfig ConfigFromEnv() {
  CrashConfig config;
  if (const char* s = std::getenv("CAIRN_CRASH_SECONDS"); s && *s) {
    config.seconds = std::atoi(s);
  }
  if (const char* s = std::getenv("CAIRN_CRASH_SEED"); s && *s) {
    config.seed = std::strtoull(s, nullptr, 10);
  } else {
    config.seed = std::random_device()() % 1000000;
  }
  return config;
}

// The cairnd under test, restarted after each kill. Clients take the stub of
// the running instance (nullptr while it is down). Thread-safe.
class RestartingServer {
 public:
  explicit RestartingServer(std::string data_dir)
      : process_(std::move(data_dir)) {}

  bool Start(std::string* error) {
    absl::MutexLock lock(&mu_);
    if (!process_.Start(error)) return false;
    stub_ = process_.NewStub();
    return true;
  }
  void Kill9() {
    absl::MutexLock lock(&mu_);
    stub_.reset();
    process_.Kill9();
  }
  std::shared_ptr<Stub> stub() const {
    absl::MutexLock lock(&mu_);
    return stub_;
  }
  std::string LogTail() const {
    absl::MutexLock lock(&mu_);
    return process_.Log(4000);
  }

 private:
  mutable absl::Mutex mu_;
  CairndProcess process_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
};

// Runs the clients, each on its own thread, until Stop; Pause stops them
// between calls (for verification).
class ClientPool {
 public:
  ClientPool(RestartingServer* server, uint64_t seed) : server_(server) {
    for (int i = 0; i < kClients; ++i) {
      clients_.push_back(std::make_unique<CrashClient>(i, seed * 100 + i,
                                                       std::to_string(seed)));
    }
    for (auto& c : clients_) {
      threads_.emplace_back([this, client = c.get()] { Run(client); });
    }
  }
  ~ClientPool() { Stop(); }

  void Stop() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // Verifies every client's acknowledged writes with no call in flight.
  VerifiedWrites VerifyAll(Stub* stub) {
    absl::MutexLock pause(&pause_mu_);
    VerifiedWrites verified;
    for (auto& c : clients_) verified += c->Verify(stub);
    return verified;
  }

  std::vector<std::string> UnexpectedErrors() const {
    std::vector<std::string> out;
    for (const auto& c : clients_) {
      out.insert(out.end(), c->unexpected_errors().begin(),
                 c->unexpected_errors().end());
    }
    return out;
  }

 private:
  void Run(CrashClient* client) {
    while (!stop_.load()) {
      bool ok;
      {
        absl::ReaderMutexLock lock(&pause_mu_);
        ok = client->Step(server_->stub().get());
      }
      if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  RestartingServer* const server_;
  std::vector<std::unique_ptr<CrashClient>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  absl::Mutex pause_mu_;
};

// Counts and times of the kill loop.
struct KillStats {
  int kills = 0;
  int verifications = 0;
  double restart_seconds = 0;  // total time to restart cairnd
  double verify_seconds = 0;   // total time the clients were paused
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void PrintSummary(const CrashConfig& config, const KillStats& k,
                  const VerifiedWrites& v) {
  const int n = k.kills > 0 ? k.kills : 1;
  std::printf(
      "crash_test: seed=%llu seconds=%d kills=%d verifications=%d "
      "acknowledged writes verified=%lld (studies=%lld trials=%lld "
      "measurements=%lld completions=%lld) mean restart %.0f ms, mean "
      "verification %.0f ms\n",
      static_cast<unsigned long long>(config.seed), config.seconds, k.kills,
      k.verifications, static_cast<long long>(v.total()),
      static_cast<long long>(v.studies), static_cast<long long>(v.trials),
      static_cast<long long>(v.measurements),
      static_cast<long long>(v.completions), 1000 * k.restart_seconds / n,
      1000 * k.verify_seconds / (k.verifications > 0 ? k.verifications : 1));
  std::fflush(stdout);
}

TEST(CrashTest, Kill9AtRandomLosesNoAcknowledgedWrite) {
  const CrashConfig config = ConfigFromEnv();
  std::printf(
      "crash_test: seed=%llu seconds=%d (rerun: CAIRN_CRASH_SEED=%llu)\n",
      static_cast<unsigned long long>(config.seed), config.seconds,
      static_cast<unsigned long long>(config.seed));
  TempDir dir;
  RestartingServer server(dir.path() + "/data");
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  ClientPool pool(&server, config.seed);

  std::mt19937_64 rng(config.seed);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(config.seconds);
  KillStats stats;
  while (!::testing::Test::HasFailure()) {
    const auto next_kill =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(
            std::uniform_int_distribution<int>(500, 3000)(rng));
    if (next_kill > deadline) break;
    std::this_thread::sleep_until(next_kill);
    const auto kill_time = std::chrono::steady_clock::now();
    server.Kill9();
    ++stats.kills;
    if (!server.Start(&error)) {
      ADD_FAILURE() << "restart " << stats.kills << ": " << error;
      break;
    }
    stats.restart_seconds += SecondsSince(kill_time);
    const auto verify_time = std::chrono::steady_clock::now();
    pool.VerifyAll(server.stub().get());
    stats.verify_seconds += SecondsSince(verify_time);
    ++stats.verifications;
  }
  pool.Stop();
  VerifiedWrites verified;
  if (std::shared_ptr<Stub> stub = server.stub()) {
    verified = pool.VerifyAll(stub.get());
    ++stats.verifications;
  }
  PrintSummary(config, stats, verified);
  for (const std::string& e : pool.UnexpectedErrors()) ADD_FAILURE() << e;
  EXPECT_GT(verified.measurements, 0);
  EXPECT_GT(verified.completions, 0);
  if (config.seconds >= 4) EXPECT_GT(stats.kills, 0);
  if (::testing::Test::HasFailure()) {
    std::printf("cairnd log (tail):\n%s\n", server.LogTail().c_str());
  }
}

}  // namespace
}  // namespace cairn::testing
