// A gRPC client for the crash test: it drives its own studies (create,
// suggest, report measurements, complete) against a cairnd that is killed
// and restarted under it, records every write the server acknowledged, and
// checks that record against the server.
#ifndef CAIRN_TESTS_INTEGRATION_CRASH_CLIENT_H_
#define CAIRN_TESTS_INTEGRATION_CRASH_CLIENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cairn/v1/study_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace cairn::testing {

// Counts of acknowledged writes checked by one CrashClient::Verify.
struct VerifiedWrites {
  int64_t studies = 0;       // CreateStudy
  int64_t trials = 0;        // SuggestTrials (trial with its parameters)
  int64_t measurements = 0;  // AddTrialMeasurement
  int64_t completions = 0;   // CompleteTrial
  int64_t total() const {
    return studies + trials + measurements + completions;
  }
  VerifiedWrites& operator+=(const VerifiedWrites& o);
};

// Not thread-safe: one thread calls Step; Verify must not run concurrently
// with Step (the crash test pauses the clients to verify).
class CrashClient {
 public:
  // `index` names the client ("client-<index>", its studies
  // "crash-<tag>-c<index>-<n>"); `seed` drives its choices.
  CrashClient(int index, uint64_t seed, std::string tag);

  // Makes one call through `stub` (nullptr: the server is down; does
  // nothing and returns false). Returns false if the call failed, which is
  // expected while the server is killed; the write then counts as not
  // acknowledged and may or may not have happened.
  bool Step(cairn::v1::StudyService::Stub* stub);

  // Checks every acknowledged write against the server (gtest failures for
  // each mismatch) and the limits of unacknowledged ones: each trial keeps
  // the parameters it was suggested with; a trial whose completion was
  // acknowledged is SUCCEEDED with its final loss, one never completed is
  // still pending; each acknowledged measurement is there exactly once with
  // its value; no step is there twice or was never sent; a study holds at
  // most one pending trial (the client's; SuggestTrials hands a client its
  // pending trial back). Returns what it checked.
  VerifiedWrites Verify(cairn::v1::StudyService::Stub* stub);

  // Calls that failed with a code a killed server does not explain.
  const std::vector<std::string>& unexpected_errors() const {
    return unexpected_errors_;
  }

 private:
  // What the server acknowledged (and what was sent) for one trial.
  struct TrialRecord {
    std::string study;                      // resource name of its study
    std::map<std::string, double> params;   // as suggested
    std::map<int64_t, double> acked_steps;  // step -> loss
    std::set<int64_t> sent_steps;           // acknowledged or not
    bool complete_sent = false;             // a CompleteTrial was sent
    bool completed = false;                 // ... and acknowledged
  };

  bool CreateStudy(cairn::v1::StudyService::Stub* stub);
  bool Suggest(cairn::v1::StudyService::Stub* stub);
  bool Report(cairn::v1::StudyService::Stub* stub);
  bool Complete(cairn::v1::StudyService::Stub* stub);
  // Records a failed call; returns false.
  bool Failed(const char* call, const grpc::Status& status);

  // `got`: the study as GetStudy returned it, its counts not yet checked.
  void VerifyStudy(cairn::v1::StudyService::Stub* stub,
                   const cairn::v1::Study& got, VerifiedWrites* verified);
  void VerifyTrial(const std::string& name, const TrialRecord& record,
                   const cairn::v1::Trial* got, VerifiedWrites* verified);

  const int index_;
  const std::string tag_;
  std::mt19937_64 rng_;
  // Acknowledged studies, by resource name -> display name.
  std::map<std::string, std::string> studies_;
  std::map<std::string, TrialRecord> trials_;  // by resource name
  std::string study_;  // the study it works on ("" until one is created)
  std::string trial_;  // the trial it works on ("" between trials)
  // Display name of the next study; kept after a failed CreateStudy so the
  // retry finds the study if the failed call created it.
  std::string next_display_name_;
  int studies_created_ = 0;
  int64_t next_step_ = 1;  // unique across the client's trials
  std::vector<std::string> unexpected_errors_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_INTEGRATION_CRASH_CLIENT_H_
