// Canned StudyService answers for in-process servers.
#include "tests/testing/fake_study_service.h"

#include <chrono>
#include <string>
#include <thread>

namespace cairn::testing {

grpc::Status FakeStudyService::CreateStudy(
    grpc::ServerContext*, const cairn::v1::CreateStudyRequest* request,
    cairn::v1::Study* response) {
  const std::string& name = request->study().display_name();
  if (name == "taken") {
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                        "display_name \"taken\" exists");
  }
  if (name == "slow") {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *response = request->study();
  response->set_name("studies/1");
  return grpc::Status::OK;
}

grpc::Status FakeStudyService::SuggestTrials(
    grpc::ServerContext*, const cairn::v1::SuggestTrialsRequest* request,
    cairn::v1::SuggestTrialsResponse* response) {
  cairn::v1::Trial* trial = response->add_trials();
  int64_t id = ++next_id_;
  trial->set_id(id);
  trial->set_name(request->parent() + "/trials/" + std::to_string(id));
  trial->set_state(cairn::v1::Trial::ACTIVE);
  cairn::v1::Parameter* p = trial->add_parameters();
  p->set_parameter_id("x");
  p->mutable_value()->set_number_value(0.5);
  return grpc::Status::OK;
}

grpc::Status FakeStudyService::CompleteTrial(
    grpc::ServerContext*, const cairn::v1::CompleteTrialRequest* request,
    cairn::v1::Trial* response) {
  response->set_name(request->name());
  response->set_state(cairn::v1::Trial::SUCCEEDED);
  *response->mutable_final_measurement() = request->final_measurement();
  return grpc::Status::OK;
}

grpc::Status FakeStudyService::ReportMeasurements(
    grpc::ServerContext*,
    grpc::ServerReader<cairn::v1::ReportMeasurementsRequest>* reader,
    cairn::v1::ReportMeasurementsResponse* response) {
  cairn::v1::ReportMeasurementsRequest request;
  int64_t count = 0;
  while (reader->Read(&request)) {
    if (request.trial_name().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "trial_name is empty");
    }
    ++count;
  }
  response->set_measurements_written(count);
  return grpc::Status::OK;
}

}  // namespace cairn::testing
