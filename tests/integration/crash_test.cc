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

void PrintSummary(const CrashConfig& config, int kills, int verifications,
                  const VerifiedWrites& v) {
  std::printf(
      "crash_test: seed=%llu seconds=%d kills=%d verifications=%d "
      "acknowledged writes verified=%lld (studies=%lld trials=%lld "
      "measurements=%lld completions=%lld)\n",
      static_cast<unsigned long long>(config.seed), config.seconds, kills,
      verifications, static_cast<long long>(v.total()),
      static_cast<long long>(v.studies), static_cast<long long>(v.trials),
      static_cast<long long>(v.measurements),
      static_cast<long long>(v.completions));
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
  int kills = 0, verifications = 0;
  while (!::testing::Test::HasFailure()) {
    const auto next_kill =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(
            std::uniform_int_distribution<int>(500, 3000)(rng));
    if (next_kill > deadline) break;
    std::this_thread::sleep_until(next_kill);
    server.Kill9();
    ++kills;
    if (!server.Start(&error)) {
      ADD_FAILURE() << "restart " << kills << ": " << error;
      break;
    }
    pool.VerifyAll(server.stub().get());
    ++verifications;
  }
  pool.Stop();
  VerifiedWrites verified;
  if (std::shared_ptr<Stub> stub = server.stub()) {
    verified = pool.VerifyAll(stub.get());
    ++verifications;
  }
  PrintSummary(config, kills, verifications, verified);
  for (const std::string& e : pool.UnexpectedErrors()) ADD_FAILURE() << e;
  EXPECT_GT(verified.measurements, 0);
  EXPECT_GT(verified.completions, 0);
  if (config.seconds >= 4) EXPECT_GT(kills, 0);
  if (::testing::Test::HasFailure()) {
    std::printf("cairnd log (tail):\n%s\n", server.LogTail().c_str());
  }
}

}  // namespace
}  // namespace cairn::testing
