// The real cairnd on a damaged data dir: it refuses to start, --verify
// reports the damage (exit 1), --repair sets the store aside and salvages
// it (exit 0), and cairnd then starts and serves the recovered trials.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kFirst = 6;   // Trials flushed into an SST by the restart.
constexpr int kSecond = 4;  // Trials only in the newest WAL.

// Starts cairnd on `dir`, runs `fn` with it, stops it cleanly.
template <typename Fn>
void WithCairnd(const std::string& dir, Fn fn) {
  testing::CairndProcess server(dir);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  fn(server);
  EXPECT_EQ(server.Terminate(), 0) << server.Log(2000);
}

// Suggests `count` new trials (a new client each time, so none are re-served).
void Suggest(const testing::CairndProcess& server, const std::string& study,
             int count, const std::string& client) {
  cairn::v1::SuggestTrialsRequest req;
  req.set_parent(study);
  req.set_suggestion_count(count);
  req.set_client_id(client);
  cairn::v1::SuggestTrialsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server.NewStub()->SuggestTrials(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.trials_size(), count);
}

int CountTrials(const testing::CairndProcess& server,
                const std::string& study) {
  cairn::v1::ListTrialsRequest req;
  req.set_parent(study);
  cairn::v1::ListTrialsResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = server.NewStub()->ListTrials(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.trials_size();
}

testing::CommandResult Cairnd(const std::string& dir, const std::string& flag) {
  return testing::RunCommand(
      {testing::BinDir() + "/cairnd", "--data-dir", dir, flag});
}

TEST(StoreRepairTest, VerifyAndRepairADeletedNewestWal) {
  testing::TempDir tmp;
  const std::string dir = tmp.path();
  std::string study;
  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name("repair");
    *req.mutable_study()->mutable_spec() = testing::BraninSpec();
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    ASSERT_TRUE(server.NewStub()->CreateStudy(&ctx, req, &out).ok());
    study = out.name();
    Suggest(server, study, kFirst, "first");
  });
  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    Suggest(server, study, kSecond, "second");
  });
  std::vector<fs::path> wals;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "store")) {
    if (e.path().extension() == ".log") wals.push_back(e.path());
  }
  ASSERT_FALSE(wals.empty());
  const fs::path wal = *std::max_element(wals.begin(), wals.end());
  fs::remove(wal);
  const std::string wal_name = wal.filename().string();

  testing::CommandResult start = Cairnd(dir, "--listen=127.0.0.1:0");
  EXPECT_EQ(start.exit_code, 1) << start.err;
  EXPECT_THAT(start.err, HasSubstr(wal_name + " is missing"));
  EXPECT_THAT(start.err, HasSubstr("cairnd --data-dir " + dir + " --repair"));

  testing::CommandResult verify = Cairnd(dir, "--verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is damaged"));
  EXPECT_THAT(verify.out, HasSubstr(wal_name + " is missing"));

  testing::CommandResult repair = Cairnd(dir, "--repair");
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_THAT(repair.out, HasSubstr("moved the damaged store aside to " + dir +
                                    "/store.damaged-"));
  EXPECT_THAT(repair.out, HasSubstr("recovered 1 studies, 6 trials"));

  verify = Cairnd(dir, "--verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("store is intact"));

  WithCairnd(dir, [&](const testing::CairndProcess& server) {
    EXPECT_EQ(CountTrials(server, study), kFirst);
  });
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("store.damaged-", 0) == 0) {
      EXPECT_TRUE(fs::exists(e.path() / "CURRENT"));
      ++aside;
    }
  }
  EXPECT_EQ(aside, 1);
}

}  // namespace
}  // namespace cairn
