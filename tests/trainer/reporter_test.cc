// Metric reporters: the cloudml-hypertune file format, the environment
// selection and AddTrialMeasurement against an in-process fake server.
#include "trainer/reporter.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_split.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "tests/testing/test_util.h"
#include "tests/trainer/test_util.h"

namespace cairn::trainer {
namespace {

using ::cairn::testing::TempDir;
using ::cairn::trainer::testing::ReadText;
using ::cairn::trainer::testing::WriteText;

EpochReport MakeReport(uint64_t step, double acc) {
  EpochReport r;
  r.epoch = 1;
  r.epochs = 3;
  r.step = step;
  r.elapsed_seconds = 1.5;
  r.metrics = {{"train_loss", 0.5}, {"val_loss", 0.25}, {"val_accuracy", acc}};
  return r;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(HypertuneReporterTest, WritesSortedStringValuedJsonLines) {
  const TempDir tmp;
  const std::string path = tmp.path() + "/sub/output.metrics";
  auto r = NewHypertuneReporter(path, "val_accuracy", "7");
  ASSERT_TRUE(r->Report(MakeReport(100, 0.875)).ok());
  ASSERT_TRUE(r->Report(MakeReport(200, 0.9)).ok());
  const std::vector<std::string> lines = Lines(ReadText(path));
  ASSERT_EQ(lines.size(), 2u);
  // Exact layout of Python's json.dumps(sort_keys=True) for the fixed keys.
  EXPECT_EQ(lines[0].rfind("{\"global_step\": \"100\", \"timestamp\": ", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("\"trial\": \"7\", \"val_accuracy\": \"0.875\"}"),
            std::string::npos)
      << lines[0];
  nlohmann::json j = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(j["global_step"], "200");
  EXPECT_EQ(j["val_accuracy"], "0.9");
  EXPECT_EQ(j["trial"], "7");
  EXPECT_TRUE(j["timestamp"].is_number_float());
  EXPECT_NEAR(j["timestamp"].get<double>(), static_cast<double>(time(nullptr)),
              60);
  EXPECT_EQ(j.size(), 4u);
}

TEST(HypertuneReporterTest, KeepsLastHundredIncludingExistingLines) {
  const TempDir tmp;
  const std::string path = tmp.path() + "/output.metrics";
  std::ostringstream old;
  for (int i = 0; i < 99; ++i) old << "{\"global_step\": \"old" << i << "\"}\n";
  WriteText(path, old.str());
  auto r = NewHypertuneReporter(path, "val_loss", "0");
  ASSERT_TRUE(r->Report(MakeReport(1, 0.5)).ok());
  ASSERT_TRUE(r->Report(MakeReport(2, 0.5)).ok());
  const std::vector<std::string> lines = Lines(ReadText(path));
  ASSERT_EQ(lines.size(), 100u);
  EXPECT_NE(lines[0].find("old1\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[99].find("\"global_step\": \"2\""), std::string::npos);
  EXPECT_NE(lines[99].find("\"val_loss\": \"0.25\""), std::string::npos);
}

TEST(HypertuneReporterTest, MissingMetricIsAnError) {
  const TempDir tmp;
  auto r = NewHypertuneReporter(tmp.path() + "/m", "auc", "0");
  absl::Status s = r->Report(MakeReport(1, 0.5));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("auc"), absl::string_view::npos);
}

class FakeStudyService final : public cairn::v1::StudyService::Service {
 public:
  grpc::Status AddTrialMeasurement(
      grpc::ServerContext*, const cairn::v1::AddTrialMeasurementRequest* req,
      cairn::v1::Trial* reply) override {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(*req);
    reply->set_name(req->trial_name());
    if (req->trial_name().find("missing") != std::string::npos) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such trial");
    }
    return grpc::Status::OK;
  }
  std::vector<cairn::v1::AddTrialMeasurementRequest> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  std::mutex mu_;
  std::vector<cairn::v1::AddTrialMeasurementRequest> requests_;
};

class GrpcReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                       &port_);
    b.RegisterService(&service_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port_);
  }
  void TearDown() override {
    server_->Shutdown();
    unsetenv("CAIRN_SERVER");
    unsetenv("CAIRN_TRIAL_ID");
    unsetenv("CAIRN_STUDY");
    unsetenv("CLOUD_ML_HP_METRIC_FILE");
  }
  FakeStudyService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string address_;
};

TEST_F(GrpcReporterTest, EnvSelectsServerAndSendsMeasurement) {
  setenv("CAIRN_SERVER", address_.c_str(), 1);
  setenv("CAIRN_STUDY", "studies/3", 1);
  setenv("CAIRN_TRIAL_ID", "12", 1);
  setenv("CLOUD_ML_HP_METRIC_FILE", "/nonexistent/ignored", 1);
  absl::StatusOr<std::unique_ptr<Reporter>> r =
      NewReporterFromEnv("val_accuracy");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(*r, nullptr);
  ASSERT_TRUE((*r)->Report(MakeReport(640, 0.75)).ok());
  auto reqs = service_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].trial_name(), "studies/3/trials/12");
  const auto& m = reqs[0].measurement();
  EXPECT_EQ(m.step_count(), 640);
  EXPECT_EQ(m.elapsed_duration().seconds(), 1);
  EXPECT_EQ(m.elapsed_duration().nanos(), 500000000);
  std::map<std::string, double> metrics;
  for (const auto& x : m.metrics()) metrics[x.metric_id()] = x.value();
  EXPECT_EQ(metrics, (std::map<std::string, double>{{"train_loss", 0.5},
                                                    {"val_accuracy", 0.75},
                                                    {"val_loss", 0.25}}));
}

TEST_F(GrpcReporterTest, ServerErrorsAreReturned) {
  auto r = NewGrpcReporter(address_, "studies/1/trials/missing");
  absl::Status s = r->Report(MakeReport(1, 0.5));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("no such trial"), absl::string_view::npos);
}

TEST_F(GrpcReporterTest, BareTrialIdNeedsStudy) {
  setenv("CAIRN_SERVER", address_.c_str(), 1);
  setenv("CAIRN_TRIAL_ID", "12", 1);
  EXPECT_EQ(NewReporterFromEnv("val_loss").status().code(),
            absl::StatusCode::kInvalidArgument);
  setenv("CAIRN_TRIAL_ID", "studies/9/trials/4", 1);
  ASSERT_TRUE(NewReporterFromEnv("val_loss").ok());
}

TEST_F(GrpcReporterTest, HypertuneFileWhenNoServerAndNothingOtherwise) {
  absl::StatusOr<std::unique_ptr<Reporter>> none =
      NewReporterFromEnv("val_loss");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  setenv("CLOUD_ML_HP_METRIC_FILE", "/tmp/x.metrics", 1);
  absl::StatusOr<std::unique_ptr<Reporter>> ht = NewReporterFromEnv("val_loss");
  ASSERT_TRUE(ht.ok());
  ASSERT_NE(*ht, nullptr);
  EXPECT_NE((*ht)->Describe().find("/tmp/x.metrics"), std::string::npos);
}

}  // namespace
}  // namespace cairn::trainer
