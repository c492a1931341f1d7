// CrashClient: see crash_client.h.
#include "tests/integration/crash_client.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn::testing {
namespace {

using cairn::v1::Trial;
using Stub = cairn::v1::StudyService::Stub;

constexpr int kMeasurementsPerTrial = 3;
constexpr int64_t kFinalStep = 1000000000;

// Every call gets a deadline, so a client never hangs on a dead server.
void SetDeadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

// The loss a client reports at `step` (a function of the step only, so the
// check needs no other record).
double StepLoss(int64_t step) { return 1.0 / static_cast<double>(step); }

bool IsPending(Trial::State state) {
  return state == Trial::REQUESTED || state == Trial::ACTIVE ||
         state == Trial::STOPPING;
}

std::map<std::string, double> ParamsOf(const Trial& t) {
  std::map<std::string, double> out;
  for (const auto& p : t.parameters()) {
    out[p.parameter_id()] = p.value().number_value();
  }
  return out;
}

double FinalLoss(const std::map<std::string, double>& params) {
  auto get = [&](const char* id) {
    auto it = params.find(id);
    return it == params.end() ? 0.0 : it->second;
  };
  return Branin(get("x1"), get("x2"));
}

// All trials of a study with their measurements; nullopt if a page failed.
std::optional<std::vector<Trial>> ListAllTrials(Stub* stub,
                                                const std::string& study) {
  std::vector<Trial> all;
  std::string token;
  do {
    cairn::v1::ListTrialsRequest req;
    req.set_parent(study);
    req.set_page_token(token);
    req.set_include_measurements(true);
    cairn::v1::ListTrialsResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    grpc::Status st = stub->ListTrials(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << study << ": " << st.error_message();
    if (!st.ok()) return std::nullopt;
    for (auto& t : *resp.mutable_trials()) all.push_back(std::move(t));
    token = resp.next_page_token();
  } while (!token.empty());
  return all;
}

}  // namespace

VerifiedWrites& VerifiedWrites::operator+=(const VerifiedWrites& o) {
  studies += o.studies;
  trials += o.trials;
  measurements += o.measurements;
  completions += o.completions;
  return *this;
}

CrashClient::CrashClient(int index, uint64_t seed, std::string tag)
    : index_(index), tag_(std::move(tag)), rng_(seed) {}

bool CrashClient::Step(Stub* stub) {
  if (stub == nullptr) return false;
  // Now and then (between trials) it moves on to a new study.
  if (study_.empty() || (trial_.empty() && rng_() % 50 == 0)) {
    return CreateStudy(stub);
  }
  if (trial_.empty()) return Suggest(stub);
  const TrialRecord& record = trials_.at(trial_);
  if (record.sent_steps.size() < kMeasurementsPerTrial) return Report(stub);
  return Complete(stub);
}

bool CrashClient::Failed(const char* call, const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:  // "Stream removed" when killed mid-call
      break;
    default:
      unexpected_errors_.push_back(absl::StrCat("client ", index_, ": ", call,
                                                ": code ", status.error_code(),
                                                " ", status.error_message()));
  }
  return false;
}

bool CrashClient::CreateStudy(Stub* stub) {
  if (next_display_name_.empty()) {
    next_display_name_ =
        absl::StrCat("crash-", tag_, "-c", index_, "-", studies_created_++);
  }
  cairn::v1::CreateStudyRequest req;
  req.mutable_study()->set_display_name(next_display_name_);
  *req.mutable_study()->mutable_spec() = BraninSpec();
  req.mutable_study()->mutable_spec()->set_algorithm(
      cairn::v1::StudySpec::RANDOM_SEARCH);
  cairn::v1::Study study;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  grpc::Status st = stub->CreateStudy(&ctx, req, &study);
  if (st.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
    // An earlier, unacknowledged CreateStudy made it.
    cairn::v1::LookupStudyRequest lookup;
    lookup.set_display_name(next_display_name_);
    grpc::ClientContext lookup_ctx;
    SetDeadline(&lookup_ctx);
    st = stub->LookupStudy(&lookup_ctx, lookup, &study);
  }
  if (!st.ok()) return Failed("CreateStudy", st);
  studies_[study.name()] = next_display_name_;
  study_ = study.name();
  next_display_name_.clear();
  return true;
}

bool CrashClient::Suggest(Stub* stub) {
  cairn::v1::SuggestTrialsRequest req;
  req.set_parent(study_);
  req.set_suggestion_count(1);
  req.set_client_id(absl::StrCat("client-", index_));
  cairn::v1::SuggestTrialsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  grpc::Status st = stub->SuggestTrials(&ctx, req, &resp);
  if (!st.ok()) return Failed("SuggestTrials", st);
  if (resp.trials().empty()) return true;
  const Trial& t = resp.trials(0);
  auto [it, added] = trials_.try_emplace(t.name());
  if (added) {
    it->second.study = study_;
    it->second.params = ParamsOf(t);
  } else {
    // Its own pending trial, handed back: the same parameters.
    EXPECT_EQ(it->second.params, ParamsOf(t)) << t.name();
  }
  trial_ = t.name();
  return true;
}

bool CrashClient::Report(Stub* stub) {
  TrialRecord& record = trials_.at(trial_);
  // A fresh step for every call, so a retry after an unacknowledged call
  // never duplicates a step.
  const int64_t step = next_step_++;
  record.sent_steps.insert(step);
  cairn::v1::AddTrialMeasurementRequest req;
  req.set_trial_name(trial_);
  *req.mutable_measurement() = Loss(StepLoss(step), step);
  Trial out;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  grpc::Status st = stub->AddTrialMeasurement(&ctx, req, &out);
  if (!st.ok()) return Failed("AddTrialMeasurement", st);
  record.acked_steps[step] = StepLoss(step);
  return true;
}

bool CrashClient::Complete(Stub* stub) {
  TrialRecord& record = trials_.at(trial_);
  record.complete_sent = true;
  cairn::v1::CompleteTrialRequest req;
  req.set_name(trial_);
  *req.mutable_final_measurement() = Loss(FinalLoss(record.params), kFinalStep);
  Trial out;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  grpc::Status st = stub->CompleteTrial(&ctx, req, &out);
  // Either way it moves on: if the trial is still pending, SuggestTrials
  // hands it back and it completes it again.
  trial_.clear();
  if (st.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    return false;  // an unacknowledged CompleteTrial completed it already
  }
  if (!st.ok()) return Failed("CompleteTrial", st);
  record.completed = true;
  return true;
}

VerifiedWrites CrashClient::Verify(Stub* stub) {
  VerifiedWrites verified;
  for (const auto& [study, display_name] : studies_) {
    cairn::v1::GetStudyRequest req;
    req.set_name(study);
    cairn::v1::Study got;
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    grpc::Status st = stub->GetStudy(&ctx, req, &got);
    EXPECT_TRUE(st.ok()) << "acknowledged study " << study
                         << " lost: " << st.error_message();
    if (!st.ok()) continue;
    EXPECT_EQ(got.display_name(), display_name);
    ++verified.studies;
    VerifyStudy(stub, got, &verified);
  }
  return verified;
}

void CrashClient::VerifyStudy(Stub* stub, const cairn::v1::Study& got,
                              VerifiedWrites* verified) {
  const std::string& study = got.name();
  std::optional<std::vector<Trial>> trials = ListAllTrials(stub, study);
  if (!trials) return;
  std::map<std::string, const Trial*> by_name;
  int pending = 0;
  int succeeded = 0;
  for (const Trial& t : *trials) {
    EXPECT_TRUE(by_name.emplace(t.name(), &t).second) << "twice: " << t.name();
    if (IsPending(t.state())) ++pending;
    if (t.state() == Trial::SUCCEEDED) ++succeeded;
    if (trials_.count(t.name()) == 0) {
      // From an unacknowledged SuggestTrials: no measurement can be there.
      EXPECT_EQ(t.measurements_size(), 0) << t.name();
    }
  }
  EXPECT_LE(pending, 1) << study << " has " << pending << " pending trials";
  // The counts GetStudy gave before the trials were listed (after a restart:
  // from the study's summary record, written in the batch of every trial
  // change) match the trials.
  EXPECT_EQ(got.trial_count(), static_cast<int>(trials->size())) << study;
  EXPECT_EQ(got.pending_count(), pending) << study;
  EXPECT_EQ(got.succeeded_count(), succeeded) << study;
  for (const auto& [name, record] : trials_) {
    if (record.study != study) continue;
    auto it = by_name.find(name);
    VerifyTrial(name, record, it == by_name.end() ? nullptr : it->second,
                verified);
  }
}

void CrashClient::VerifyTrial(const std::string& name,
                              const TrialRecord& record, const Trial* got,
                              VerifiedWrites* verified) {
  EXPECT_NE(got, nullptr) << "acknowledged trial " << name << " lost";
  if (got == nullptr) return;
  EXPECT_EQ(ParamsOf(*got), record.params) << name;
  ++verified->trials;
  if (record.completed) {
    const cairn::v1::Measurement& final = got->final_measurement();
    EXPECT_EQ(got->state(), Trial::SUCCEEDED) << name;
    EXPECT_EQ(final.step_count(), kFinalStep) << name;
    EXPECT_EQ(final.metrics_size(), 1) << name;
    if (final.metrics_size() == 1) {
      EXPECT_DOUBLE_EQ(final.metrics(0).value(), FinalLoss(record.params))
          << name;
    }
    ++verified->completions;
  } else if (!record.complete_sent) {
    EXPECT_TRUE(IsPending(got->state())) << name << " " << got->state();
  }
  std::map<int64_t, int> copies;
  for (const auto& m : got->measurements()) {
    if (m.step_count() == kFinalStep) continue;
    EXPECT_EQ(++copies[m.step_count()], 1)
        << name << " step " << m.step_count() << " twice";
    EXPECT_TRUE(record.sent_steps.count(m.step_count()))
        << name << " has step " << m.step_count() << " that was never sent";
    EXPECT_EQ(m.metrics_size(), 1) << name;
    if (m.metrics_size() == 1) {
      EXPECT_DOUBLE_EQ(m.metrics(0).value(), StepLoss(m.step_count()));
    }
  }
  for (const auto& [step, loss] : record.acked_steps) {
    EXPECT_EQ(copies[step], 1)
        << "acknowledged measurement " << name << " step " << step << " lost";
    if (copies[step] == 1) ++verified->measurements;
  }
}

}  // namespace cairn::testing
