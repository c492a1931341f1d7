// A real cairnd on loopback, a 30-trial study over gRPC, kill -9 in the
// middle (while a client is writing), restart on the same data dir: every
// acknowledged trial and measurement is there and the study finishes with
// exactly max_trials trials.
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/empty_call.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::Trial;

constexpr int kMaxTrials = 30;
constexpr char kClient[] = "worker-1";

using testing::Branin;
using testing::Loss;

class Client {
 public:
  explicit Client(const testing::CairndProcess& server)
      : stub_(server.NewStub()) {}

  grpc::Status Create(Study* out) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name("crash");
    cairn::v1::StudySpec* spec = req.mutable_study()->mutable_spec();
    *spec = testing::BraninSpec();
    spec->set_algorithm(cairn::v1::StudySpec::QUASI_RANDOM_SEARCH);
    spec->set_max_trials(kMaxTrials);
    grpc::ClientContext ctx;
    return stub_->CreateStudy(&ctx, req, out);
  }

  grpc::Status Suggest(const std::string& study,
                       cairn::v1::SuggestTrialsResponse* out) {
    cairn::v1::SuggestTrialsRequest req;
    req.set_parent(study);
    req.set_suggestion_count(1);
    req.set_client_id(kClient);
    grpc::ClientContext ctx;
    return stub_->SuggestTrials(&ctx, req, out);
  }

  grpc::Status Report(const std::string& trial, const Measurement& m) {
    cairn::v1::AddTrialMeasurementRequest req;
    req.set_trial_name(trial);
    *req.mutable_measurement() = m;
    Trial out;
    grpc::ClientContext ctx;
    return stub_->AddTrialMeasurement(&ctx, req, &out);
  }

  grpc::Status Stream(const std::string& trial, int from, int to) {
    grpc::ClientContext ctx;
    cairn::v1::ReportMeasurementsResponse resp;
    auto writer = stub_->ReportMeasurements(&ctx, &resp);
    for (int s = from; s < to; ++s) {
      cairn::v1::ReportMeasurementsRequest req;
      req.set_trial_name(trial);
      *req.mutable_measurement() = Loss(100.0 - s, s);
      writer->Write(req);
    }
    writer->WritesDone();
    grpc::Status st = writer->Finish();
    if (st.ok() && resp.measurements_written() != to - from) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "short stream count");
    }
    return st;
  }

  grpc::Status Complete(const std::string& trial, double loss, Trial* out) {
    cairn::v1::CompleteTrialRequest req;
    req.set_name(trial);
    *req.mutable_final_measurement() = Loss(loss, 100);
    grpc::ClientContext ctx;
    return stub_->CompleteTrial(&ctx, req, out);
  }

  grpc::Status Get(const std::string& trial, Trial* out) {
    cairn::v1::GetTrialRequest req;
    req.set_name(trial);
    grpc::ClientContext ctx;
    return stub_->GetTrial(&ctx, req, out);
  }

  std::vector<Trial> List(const std::string& study) {
    std::vector<Trial> all;
    std::string token;
    do {
      cairn::v1::ListTrialsRequest req;
      req.set_parent(study);
      req.set_page_size(7);
      req.set_page_token(token);
      cairn::v1::ListTrialsResponse resp;
      grpc::ClientContext ctx;
      EXPECT_TRUE(stub_->ListTrials(&ctx, req, &resp).ok());
      for (const auto& t : resp.trials()) all.push_back(t);
      token = resp.next_page_token();
    } while (!token.empty());
    return all;
  }

 private:
  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

// What the server acknowledged before the crash.
struct Acked {
  std::map<int64_t, double> completed;         // trial id -> final loss
  std::map<int64_t, std::set<int64_t>> steps;  // trial id -> steps
};

double Param(const Trial& t, const std::string& id) {
  for (const auto& p : t.parameters()) {
    if (p.parameter_id() == id) return p.value().number_value();
  }
  ADD_FAILURE() << "missing parameter " << id;
  return 0;
}

// Runs one trial to completion; returns false if the study is done.
bool RunOneTrial(Client& client, const std::string& study, Acked& acked) {
  cairn::v1::SuggestTrialsResponse resp;
  grpc::Status st = client.Suggest(study, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  if (resp.trials().empty()) return false;
  const Trial& t = resp.trials(0);
  const std::string name = t.name();
  EXPECT_TRUE(client.Report(name, Loss(50, 1)).ok());
  acked.steps[t.id()].insert(1);
  EXPECT_TRUE(client.Stream(name, 2, 12).ok());
  for (int s = 2; s < 12; ++s) acked.steps[t.id()].insert(s);
  const double loss = Branin(Param(t, "x1"), Param(t, "x2"));
  Trial done;
  EXPECT_TRUE(client.Complete(name, loss, &done).ok());
  acked.completed[t.id()] = loss;
  return true;
}

TEST(CrashRecoveryTest, Kill9LosesNothingAcknowledgedAndStudyFinishes) {
  testing::TempDir dir;
  Acked acked;
  std::string study_name;
  int64_t hammered_trial = 0;
  {
    testing::CairndProcess server(dir.path() + "/data");
    std::string error;
    ASSERT_TRUE(server.Start(&error)) << error;
    Client client(server);
    Study study;
    ASSERT_TRUE(client.Create(&study).ok());
    study_name = study.name();
    for (int i = 0; i < 12; ++i)
      ASSERT_TRUE(RunOneTrial(client, study_name, acked));

    // Trial 13: a writer thread reports as fast as it can; kill -9 hits it
    // mid-stream. Every step that got an OK must survive.
    cairn::v1::SuggestTrialsResponse resp;
    ASSERT_TRUE(client.Suggest(study_name, &resp).ok());
    ASSERT_EQ(resp.trials_size(), 1);
    hammered_trial = resp.trials(0).id();
    const std::string name = resp.trials(0).name();
    std::atomic<int> acks{0};
    std::thread writer([&] {
      Client own(server);
      for (int s = 1; s < 100000; ++s) {
        if (!own.Report(name, Loss(1000.0 / s, s)).ok()) break;
        acked.steps[hammered_trial].insert(s);
        acks.fetch_add(1);
      }
    });
    while (acks.load() < 200)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.Kill9();
    writer.join();
  }
  ASSERT_GE(acked.steps[hammered_trial].size(), 200u);

  testing::CairndProcess server(dir.path() + "/data");
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  Client client(server);
  // Everything acknowledged is there.
  for (const auto& [id, loss] : acked.completed) {
    Trial t;
    ASSERT_TRUE(
        client.Get(study_name + "/trials/" + std::to_string(id), &t).ok());
    EXPECT_EQ(t.state(), Trial::SUCCEEDED) << id;
    EXPECT_DOUBLE_EQ(t.final_measurement().metrics(0).value(), loss);
  }
  for (const auto& [id, steps] : acked.steps) {
    Trial t;
    ASSERT_TRUE(
        client.Get(study_name + "/trials/" + std::to_string(id), &t).ok());
    std::set<int64_t> stored;
    for (const auto& m : t.measurements()) stored.insert(m.step_count());
    for (int64_t s : steps) {
      ASSERT_TRUE(stored.count(s)) << "trial " << id << " lost step " << s;
    }
  }
  // The same client gets its interrupted trial back, then the study goes on.
  cairn::v1::SuggestTrialsResponse resp;
  ASSERT_TRUE(client.Suggest(study_name, &resp).ok());
  ASSERT_EQ(resp.trials_size(), 1);
  EXPECT_EQ(resp.trials(0).id(), hammered_trial);
  Trial done;
  ASSERT_TRUE(client.Complete(resp.trials(0).name(), 1.0, &done).ok());
  while (RunOneTrial(client, study_name, acked)) {
  }
  std::vector<Trial> all = client.List(study_name);
  EXPECT_EQ(static_cast<int>(all.size()), kMaxTrials);
  std::set<int64_t> ids;
  for (const auto& t : all) {
    ids.insert(t.id());
    EXPECT_EQ(t.state(), Trial::SUCCEEDED);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kMaxTrials));
  EXPECT_EQ(*ids.rbegin(), kMaxTrials);
  // And it shuts down cleanly on SIGTERM.
  const int status = server.Terminate();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(CrashRecoveryTest, ServesHealthAndReportsCountsOnStart) {
  testing::TempDir dir;
  testing::CairndProcess server(dir.path() + "/data");
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  auto channel =
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  // The standard health service answers SERVING (HealthCheckResponse with
  // status = 1 is the two bytes 08 01) for the empty service name.
  std::string bytes;
  const grpc::Status status = testing::CallWithEmptyRequest(
      channel, "/grpc.health.v1.Health/Check", "", &bytes);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
  Client client(server);
  Study study;
  ASSERT_TRUE(client.Create(&study).ok());
  server.Kill9();
  testing::CairndProcess again(dir.path() + "/data");
  ASSERT_TRUE(again.Start(&error)) << error;
  std::ifstream log(again.log_path());
  std::stringstream ss;
  ss << log.rdbuf();
  EXPECT_NE(ss.str().find("holds 1 studies and 0 trials"), std::string::npos)
      << ss.str();
}

}  // namespace
}  // namespace cairn
