// One home for what the jobs integration tests (job_runner_test, slurm_test)
// do with a real cairnd's StudyService: create a study over the toy trainer
// (tests/jobs/toy_trainer.py), read studies and trials, wait for a study to
// end. Every failed call is a test failure naming the call.
#ifndef CAIRN_TESTS_JOBS_STUDY_FIXTURE_H_
#define CAIRN_TESTS_JOBS_STUDY_FIXTURE_H_

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace cairn::testing {

// The checkout (CAIRN_SOURCE_DIR, else ".").
inline std::string SourceDir() {
  const char* src = std::getenv("CAIRN_SOURCE_DIR");
  return src ? src : ".";
}

inline std::string ToyTrainer() {
  return SourceDir() + "/tests/jobs/toy_trainer.py";
}

// A fixture whose tests talk to cairnd through stub_ (set by the test).
class StudyFixture : public ::testing::Test {
 protected:
  // A study over one DISCRETE parameter x in 0..7 minimizing "loss" whose
  // job runs the toy trainer, merged with `extra_spec` (a StudySpec in text
  // format), with `env` added to the job's environment; RANDOM_SEARCH unless
  // extra_spec names an algorithm.
  cairn::v1::Study Create(const std::string& name,
                          const std::string& extra_spec,
                          const std::map<std::string, std::string>& env) {
    cairn::v1::CreateStudyRequest req;
    req.mutable_study()->set_display_name(name);
    cairn::v1::StudySpec* spec = req.mutable_study()->mutable_spec();
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
        absl::StrCat(
            R"pb(
              parameters {
                parameter_id: "x"
                type: DISCRETE
                discrete_values: [ 0, 1, 2, 3, 4, 5, 6, 7 ]
              }
              metrics { metric_id: "loss" goal: MINIMIZE }
              job_template { command: "/usr/bin/python3" command: ")pb",
            ToyTrainer(), "\" }"),
        spec));
    cairn::v1::StudySpec extra;
    EXPECT_TRUE(
        google::protobuf::TextFormat::ParseFromString(extra_spec, &extra));
    spec->MergeFrom(extra);
    if (spec->algorithm() == cairn::v1::StudySpec::ALGORITHM_UNSPECIFIED) {
      spec->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
    }
    for (const auto& [k, v] : env) {
      (*spec->mutable_job_template()->mutable_env())[k] = v;
    }
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->CreateStudy(&ctx, req, &out);
    EXPECT_TRUE(st.ok()) << "CreateStudy: " << st.error_message();
    return out;
  }

  cairn::v1::Study GetStudy(const std::string& name) {
    cairn::v1::GetStudyRequest req;
    req.set_name(name);
    cairn::v1::Study out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->GetStudy(&ctx, req, &out);
    EXPECT_TRUE(st.ok()) << "GetStudy: " << st.error_message();
    return out;
  }

  // Polls until the study leaves ACTIVE or `seconds` pass.
  cairn::v1::Study WaitDone(const std::string& name, int seconds) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    cairn::v1::Study s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = GetStudy(name);
      if (s.state() != cairn::v1::Study::ACTIVE) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "study " << name << " still ACTIVE after " << seconds
                  << " s: " << s.ShortDebugString();
    return s;
  }

  std::vector<cairn::v1::Trial> Trials(const std::string& study,
                                       bool measurements = true) {
    cairn::v1::ListTrialsRequest req;
    req.set_parent(study);
    req.set_include_measurements(measurements);
    cairn::v1::ListTrialsResponse resp;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->ListTrials(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << "ListTrials: " << st.error_message();
    return {resp.trials().begin(), resp.trials().end()};
  }

  // Polls until every trial's job has ended (a study may complete when its
  // trials report, before the runner has stopped their jobs' other
  // replicas) or `seconds` pass; returns the trials last read.
  std::vector<cairn::v1::Trial> WaitJobsEnded(const std::string& study,
                                              int seconds) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::vector<cairn::v1::Trial> trials;
    while (std::chrono::steady_clock::now() < deadline) {
      trials = Trials(study);
      if (std::all_of(trials.begin(), trials.end(), JobEnded)) return trials;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "jobs of " << study << " still running after " << seconds
                  << " s";
    return trials;
  }

  static bool JobEnded(const cairn::v1::Trial& t) {
    using cairn::v1::TrialJob;
    const TrialJob::State s = t.job().state();
    return s == TrialJob::STATE_UNSPECIFIED || s == TrialJob::SUCCEEDED ||
           s == TrialJob::FAILED || s == TrialJob::CANCELLED;
  }

  cairn::v1::Trial GetTrial(const std::string& name) {
    cairn::v1::GetTrialRequest req;
    req.set_name(name);
    cairn::v1::Trial out;
    grpc::ClientContext ctx;
    grpc::Status st = stub_->GetTrial(&ctx, req, &out);
    EXPECT_TRUE(st.ok()) << "GetTrial: " << st.error_message();
    return out;
  }

  std::unique_ptr<cairn::v1::StudyService::Stub> stub_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_JOBS_STUDY_FIXTURE_H_
