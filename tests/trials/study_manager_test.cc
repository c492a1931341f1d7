// StudyManager on a real RocksDB store in a temp dir: lifecycle, limits,
// idempotent suggestions, bad input, recovery.
#include "trials/study_manager.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "store/rocksdb_store.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::Trial;

using ::testing::HasSubstr;
using testing::Loss;

Study BraninStudy(const std::string& name, int max_trials,
                  int max_parallel = 0) {
  Study study;
  study.set_display_name(name);
  *study.mutable_spec() = testing::BraninSpec();
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  study.mutable_spec()->set_seed(7);
  study.mutable_spec()->set_max_trials(max_trials);
  study.mutable_spec()->set_max_parallel_trials(max_parallel);
  return study;
}

class StudyManagerTest : public testing::StudyManagerFixture {};

TEST_F(StudyManagerTest, RunsAStudyToMaxTrialsAndCompletes) {
  auto study = manager_->CreateStudy(BraninStudy("branin", 5));
  ASSERT_TRUE(study.ok()) << study.status();
  EXPECT_EQ(study->name(), "studies/1");
  EXPECT_EQ(study->state(), Study::ACTIVE);
  std::set<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    auto r = manager_->SuggestTrials(study->name(), 1, "");
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 1u);
    const Trial& t = r->trials[0];
    EXPECT_EQ(t.state(), Trial::ACTIVE);
    EXPECT_EQ(t.parameters_size(), 2);
    EXPECT_TRUE(t.metadata().count("suggestion_seconds"));
    ids.insert(t.id());
    ASSERT_TRUE(manager_->AddMeasurement(t.name(), Loss(10.0 - i, 1)).ok());
    auto done = manager_->CompleteTrial(t.name(), Loss(i + 1.0), false, "");
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_EQ(done->state(), Trial::SUCCEEDED);
  }
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3, 4, 5}));
  auto more = manager_->SuggestTrials(study->name(), 3, "");
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->trials.empty());
  EXPECT_EQ(more->study_state, Study::COMPLETED);
  EXPECT_NE(more->message.find("max_trials (5) reached"), std::string::npos)
      << more->message;
  auto best = manager_->ListOptimalTrials(study->name());
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].id(), 1);  // loss 1.0 is the smallest.
}

TEST_F(StudyManagerTest, StoppingAFinishedStudyKeepsItsOutcome) {
  auto study = manager_->CreateStudy(BraninStudy("finished", 1));
  ASSERT_TRUE(study.ok()) << study.status();
  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(
      manager_->CompleteTrial(r->trials[0].name(), Loss(1.0), false, "").ok());
  auto done = manager_->GetStudy(study->name());
  ASSERT_TRUE(done.ok());
  ASSERT_EQ(done->state(), Study::COMPLETED);

  auto stopped = manager_->SetStudyState(study->name(), Study::INACTIVE);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->state(), Study::COMPLETED);
  EXPECT_EQ(stopped->inactive_reason(), done->inactive_reason());
  Reopen();  // Nothing was written either.
  auto after = manager_->GetStudy(study->name());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), Study::COMPLETED);

  // An ACTIVE study still stops.
  auto running = manager_->CreateStudy(BraninStudy("running", 5));
  ASSERT_TRUE(running.ok());
  auto paused = manager_->SetStudyState(running->name(), Study::INACTIVE);
  ASSERT_TRUE(paused.ok());
  EXPECT_EQ(paused->state(), Study::INACTIVE);
}

TEST_F(StudyManagerTest, MaxParallelTrialsLimitsPendingTrials) {
  auto study = manager_->CreateStudy(BraninStudy("par", 10, 2));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 5, "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->trials.size(), 2u);
  EXPECT_NE(r->message.find("max_parallel_trials"), std::string::npos);
  auto none = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->trials.empty());
  ASSERT_TRUE(
      manager_->CompleteTrial(r->trials[0].name(), Loss(1), false, "").ok());
  auto one = manager_->SuggestTrials(study->name(), 5, "");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->trials.size(), 1u);
}

TEST_F(StudyManagerTest, SameClientGetsItsPendingTrialsBack) {
  auto study = manager_->CreateStudy(BraninStudy("client", 10));
  ASSERT_TRUE(study.ok());
  auto first = manager_->SuggestTrials(study->name(), 2, "worker-1");
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->trials.size(), 2u);
  auto again = manager_->SuggestTrials(study->name(), 2, "worker-1");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->trials.size(), 2u);
  EXPECT_EQ(again->trials[0].id(), first->trials[0].id());
  EXPECT_EQ(again->trials[1].id(), first->trials[1].id());
  auto other = manager_->SuggestTrials(study->name(), 1, "worker-2");
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->trials.size(), 1u);
  EXPECT_EQ(other->trials[0].id(), 3);
}

TEST_F(StudyManagerTest, BadInputIsRejectedAndNothingIsWritten) {
  Study bad = BraninStudy("bad", 5);
  bad.mutable_spec()->mutable_parameters(0)->set_min_value(20);
  auto s = manager_->CreateStudy(bad);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("x1"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(manager_->num_studies(), 0);

  auto study = manager_->CreateStudy(BraninStudy("good", 5));
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(manager_->CreateStudy(BraninStudy("good", 5)).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(manager_->GetStudy("studies/99").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(manager_->GetStudy("nonsense").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager_->GetTrial("studies/1/trials/9").status().code(),
            absl::StatusCode::kNotFound);

  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok());
  const std::string trial = r->trials[0].name();
  Measurement nan = Loss(std::nan(""));
  EXPECT_EQ(manager_->AddMeasurement(trial, nan).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The API's limits hold for callers in the process too (a job's metric
  // file): a metric id of 200 characters, one with a space, 101 metrics.
  for (const std::string& id : {std::string(200, 'q'), std::string("a b")}) {
    Measurement odd = Loss(1);
    odd.add_metrics()->set_metric_id(id);
    const absl::Status s = manager_->AddMeasurement(trial, odd).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("measurement.metrics[1].metric_id"),
              std::string::npos)
        << s.message();
  }
  Measurement many = Loss(1);
  for (int i = 0; i < 100; ++i) {
    many.add_metrics()->set_metric_id(absl::StrCat("m", i));
  }
  EXPECT_EQ(manager_->AddMeasurement(trial, many).status().code(),
            absl::StatusCode::kInvalidArgument);
  Measurement unknown;
  auto* m = unknown.add_metrics();
  m->set_metric_id("accuracy");
  m->set_value(0.5);
  auto c = manager_->CompleteTrial(trial, unknown, false, "");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("loss"), std::string::npos)
      << c.status().message();
  // No measurement yet: completing without a final one is refused.
  EXPECT_EQ(
      manager_->CompleteTrial(trial, std::nullopt, false, "").status().code(),
      absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(manager_->CompleteTrial(trial, Loss(3), false, "").ok());
  auto twice = manager_->CompleteTrial(trial, Loss(2), false, "");
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kFailedPrecondition);
  auto stored = manager_->GetTrial(trial);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->final_measurement().metrics(0).value(), 3);
  EXPECT_TRUE(stored->measurements().empty());
}

TEST_F(StudyManagerTest, LastMeasurementBecomesFinalAndHistoryIsKept) {
  auto study = manager_->CreateStudy(BraninStudy("curve", 3));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok());
  const std::string trial = r->trials[0].name();
  for (int step = 1; step <= 5; ++step) {
    ASSERT_TRUE(manager_->AddMeasurement(trial, Loss(10.0 / step, step)).ok());
  }
  auto done = manager_->CompleteTrial(trial, std::nullopt, false, "");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->final_measurement().step_count(), 5);
  EXPECT_DOUBLE_EQ(done->final_measurement().metrics(0).value(), 2.0);
  MetricHistoryQuery query;
  query.metric_id = "loss";
  auto history = manager_->GetMetricHistory(trial, query);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->points.size(), 5u);
  EXPECT_EQ(history->points[0].step_count(), 1);
  EXPECT_DOUBLE_EQ(history->points[4].metrics(0).value(), 2.0);
  EXPECT_EQ(history->next_page_token, "");
}

TEST_F(StudyManagerTest, InfeasibleAndStopAndManualTrials) {
  auto study = manager_->CreateStudy(BraninStudy("misc", 4));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 2, "");
  ASSERT_TRUE(r.ok());
  auto inf = manager_->CompleteTrial(r->trials[0].name(), std::nullopt, true,
                                     "diverged");
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ(inf->state(), Trial::INFEASIBLE);
  EXPECT_EQ(inf->infeasible_reason(), "diverged");
  auto counts = manager_->GetStudy(study->name());
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->infeasible_count(), 1);
  EXPECT_EQ(counts->failed_count(), 0) << "INFEASIBLE is not FAILED";
  auto stop = manager_->StopTrial(r->trials[1].name());
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->state(), Trial::STOPPING);
  auto check = manager_->CheckEarlyStopping(r->trials[1].name());
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->stop);
  auto done = manager_->CompleteTrial(r->trials[1].name(), Loss(4), false, "");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->stopped_early());

  Trial manual;
  auto* p = manual.add_parameters();
  p->set_parameter_id("x1");
  p->mutable_value()->set_number_value(1.0);
  auto* q = manual.add_parameters();
  q->set_parameter_id("x2");
  q->mutable_value()->set_number_value(99.0);  // Out of range.
  auto bad = manager_->CreateTrial(study->name(), manual);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("x2"), std::string::npos);
  q->mutable_value()->set_number_value(2.0);
  *manual.mutable_final_measurement() = Loss(0.5);
  auto good = manager_->CreateTrial(study->name(), manual);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->id(), 3);
  EXPECT_EQ(good->state(), Trial::SUCCEEDED);
}

TEST_F(StudyManagerTest, RecoversEverythingAndContinuesToMaxTrials) {
  auto study = manager_->CreateStudy(BraninStudy("recover", 6));
  ASSERT_TRUE(study.ok());
  std::vector<Trial> first;
  for (int i = 0; i < 3; ++i) {
    auto r = manager_->SuggestTrials(study->name(), 1, "");
    ASSERT_TRUE(r.ok());
    first.push_back(r->trials[0]);
    ASSERT_TRUE(manager_->AddMeasurement(r->trials[0].name(), Loss(i, 1)).ok());
  }
  ASSERT_TRUE(
      manager_->CompleteTrial(first[0].name(), Loss(5), false, "").ok());
  Reopen();
  EXPECT_EQ(manager_->num_studies(), 1);
  EXPECT_EQ(manager_->num_trials(), 3);
  auto t2 = manager_->GetTrial(first[1].name());
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->state(), Trial::ACTIVE);
  ASSERT_EQ(t2->measurements_size(), 1);
  EXPECT_EQ(t2->parameters(0).value().number_value(),
            first[1].parameters(0).value().number_value());
  // The last measurement survives the restart as the default final one.
  auto done = manager_->CompleteTrial(first[1].name(), std::nullopt, false, "");
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE(
      manager_->CompleteTrial(first[2].name(), Loss(1), false, "").ok());
  int created = 0;
  while (true) {
    auto r = manager_->SuggestTrials(study->name(), 1, "");
    ASSERT_TRUE(r.ok());
    if (r->trials.empty()) break;
    EXPECT_GT(r->trials[0].id(), 3);
    ASSERT_TRUE(
        manager_->CompleteTrial(r->trials[0].name(), Loss(2), false, "").ok());
    ++created;
  }
  EXPECT_EQ(created, 3);
  auto final_study = manager_->GetStudy(study->name());
  EXPECT_EQ(final_study->trial_count(), 6);
  EXPECT_EQ(final_study->state(), Study::COMPLETED);
}

TEST_F(StudyManagerTest, DeletedTrialIdsAreNotReused) {
  auto study = manager_->CreateStudy(BraninStudy("ids", 0));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 2, "");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(manager_->DeleteTrial(r->trials[1].name()).ok());
  Reopen();
  auto next = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->trials[0].id(), 3);
  ASSERT_TRUE(manager_->DeleteStudy(study->name()).ok());
  auto again = manager_->CreateStudy(BraninStudy("ids", 0));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->name(), "studies/2");
}

// A 3 x 3 categorical space (9 points), minimizing "loss".
Study GridStudy(const std::string& name,
                cairn::v1::StudySpec::Algorithm algorithm, bool repeat) {
  Study study;
  study.set_display_name(name);
  cairn::v1::StudySpec& spec = *study.mutable_spec();
  for (const char* id : {"a", "b"}) {
    cairn::v1::ParameterSpec& p = *spec.add_parameters();
    p.set_parameter_id(id);
    p.set_type(cairn::v1::ParameterSpec::CATEGORICAL);
    for (const char* v : {"x", "y", "z"}) p.add_categorical_values(v);
  }
  cairn::v1::MetricSpec& m = *spec.add_metrics();
  m.set_metric_id("loss");
  m.set_goal(cairn::v1::MetricSpec::MINIMIZE);
  spec.set_algorithm(algorithm);
  spec.set_seed(3);
  spec.set_repeat_points_when_exhausted(repeat);
  return study;
}

std::string PointOf(const Trial& t) {
  return absl::StrCat(t.parameters(0).value().string_value(),
                      t.parameters(1).value().string_value());
}

// Without repeat_points_when_exhausted (the default), 10 trials asked of 9
// points give 9 and the study completes once they are done.
TEST_F(StudyManagerTest, AnExhaustedSpaceCompletesTheStudyByDefault) {
  auto study = manager_->CreateStudy(
      GridStudy("exhausts", cairn::v1::StudySpec::RANDOM_SEARCH, false));
  ASSERT_TRUE(study.ok()) << study.status();
  auto r = manager_->SuggestTrials(study->name(), 10, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->trials.size(), 9u);
  EXPECT_EQ(r->message, "search space exhausted");
  for (const Trial& t : r->trials) {
    ASSERT_TRUE(manager_->CompleteTrial(t.name(), Loss(1), false, "").ok());
  }
  auto after = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->trials.empty());
  EXPECT_EQ(after->study_state, Study::COMPLETED);
}

// With repeat_points_when_exhausted, every request is filled (the 10th trial
// repeats the first point, the repeats then take turns) and the study stays
// ACTIVE, with the GP bandit as with random search.
TEST_F(StudyManagerTest, RepeatPointsWhenExhaustedKeepsTheStudyActive) {
  for (auto algorithm :
       {cairn::v1::StudySpec::RANDOM_SEARCH, cairn::v1::StudySpec::GP_BANDIT}) {
    SCOPED_TRACE(cairn::v1::StudySpec::Algorithm_Name(algorithm));
    auto study = manager_->CreateStudy(GridStudy(
        absl::StrCat("repeats-", algorithm), algorithm, /*repeat=*/true));
    ASSERT_TRUE(study.ok()) << study.status();
    auto r = manager_->SuggestTrials(study->name(), 10, "");
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 10u) << r->message;
    EXPECT_EQ(r->message, "");
    EXPECT_EQ(r->study_state, Study::ACTIVE);
    std::set<std::string> points;
    for (int i = 0; i < 9; ++i) points.insert(PointOf(r->trials[i]));
    EXPECT_EQ(points.size(), 9u) << "new points come first";
    const Trial& repeat = r->trials[9];
    EXPECT_EQ(repeat.metadata().at("repeated_point"), "true");
    EXPECT_EQ(PointOf(repeat), PointOf(r->trials[0]));
    // Asked one at a time while all are pending, the repeats take turns.
    std::vector<Trial> pending = r->trials;
    for (int i = 1; i < 9; ++i) {
      auto one = manager_->SuggestTrials(study->name(), 1, "");
      ASSERT_TRUE(one.ok());
      ASSERT_EQ(one->trials.size(), 1u) << one->message;
      EXPECT_EQ(PointOf(one->trials[0]), PointOf(r->trials[i]));
      pending.push_back(one->trials[0]);
    }
    for (const Trial& t : pending) {
      ASSERT_TRUE(manager_->CompleteTrial(t.name(), Loss(1), false, "").ok());
    }
    auto later = manager_->SuggestTrials(study->name(), 2, "");
    ASSERT_TRUE(later.ok());
    EXPECT_EQ(later->trials.size(), 2u) << later->message;
    auto now = manager_->GetStudy(study->name());
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(now->state(), Study::ACTIVE);
  }
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

TEST_F(StudyManagerTest, MedianRuleMovesBadTrialsToStopping) {
  Study study = BraninStudy("early", 0);
  google::protobuf::TextFormat::ParseFromString(
      "median { min_steps: 2 min_completed_trials: 2 }",
      study.mutable_spec()->mutable_early_stopping());
  auto created = manager_->CreateStudy(study);
  ASSERT_TRUE(created.ok()) << created.status();
  // Two good trials complete with curves 1/step.
  for (int i = 0; i < 2; ++i) {
    auto r = manager_->SuggestTrials(created->name(), 1, "");
    ASSERT_TRUE(r.ok());
    for (int s = 1; s <= 5; ++s) {
      ASSERT_TRUE(
          manager_->AddMeasurement(r->trials[0].name(), Loss(1.0 / s, s)).ok());
    }
    ASSERT_TRUE(
        manager_->CompleteTrial(r->trials[0].name(), std::nullopt, false, "")
            .ok());
  }
  auto r = manager_->SuggestTrials(created->name(), 1, "");
  ASSERT_TRUE(r.ok());
  const std::string bad = r->trials[0].name();
  ASSERT_TRUE(manager_->AddMeasurement(bad, Loss(10, 1)).ok());
  EXPECT_FALSE(manager_->CheckEarlyStopping(bad)->stop);  // < min_steps
  auto t = manager_->AddMeasurement(bad, Loss(9, 2));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->state(), Trial::STOPPING);
  auto check = manager_->CheckEarlyStopping(bad);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->stop);
  EXPECT_NE(check->reason.find("median"), std::string::npos) << check->reason;
  // Stopping survives a restart, and completing marks it stopped early.
  Reopen();
  auto done = manager_->CompleteTrial(bad, std::nullopt, false, "");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->stopped_early());
}

// ------------------------------------------------- concurrency, group commit

int64_t SyncedWrites(Store* store) {
  return static_cast<RocksDbStore*>(store)->TEST_SyncedWrites();
}

TEST_F(StudyManagerTest, MeasurementsWithTheJobRecordTakeOneSyncedWrite) {
  auto study = manager_->CreateStudy(BraninStudy("collect", 5));
  ASSERT_TRUE(study.ok()) << study.status();
  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string trial = r->trials[0].name();
  cairn::v1::TrialJob job;
  job.set_state(cairn::v1::TrialJob::RUNNING);
  job.set_hypertune_timestamp(1234.5);

  const int64_t before = SyncedWrites(store_.get());
  auto written = manager_->AddMeasurementsWithJob(
      {{trial, Loss(3.0, 1)}, {trial, Loss(2.0, 2)}}, trial, job);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 2);
  EXPECT_EQ(SyncedWrites(store_.get()) - before, 1);

  // A rejected measurement writes nothing, not even the job record.
  cairn::v1::TrialJob later = job;
  later.set_hypertune_timestamp(9999);
  Measurement nan = Loss(std::nan(""), 3);
  EXPECT_EQ(manager_->AddMeasurementsWithJob({{trial, nan}}, trial, later)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  Reopen();
  auto got = manager_->GetTrial(trial);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->job().hypertune_timestamp(), 1234.5);
  EXPECT_EQ(got->job().state(), cairn::v1::TrialJob::RUNNING);
  ASSERT_EQ(got->measurements_size(), 2);
  EXPECT_EQ(got->measurements(1).step_count(), 2);
}

TEST_F(StudyManagerTest, ConcurrentClientsOfOneStudyShareSyncsAndAllLand) {
  constexpr int kClients = 8;
  constexpr int kRounds = 12;
  auto study = manager_->CreateStudy(BraninStudy("many", kClients * kRounds));
  ASSERT_TRUE(study.ok()) << study.status();
  const int64_t syncs_before = SyncedWrites(store_.get());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      const std::string client = absl::StrCat("client-", c);
      for (int r = 0; r < kRounds; ++r) {
        auto s = manager_->SuggestTrials(study->name(), 1, client);
        if (!s.ok() || s->trials.size() != 1) {
          ++failures;
          continue;
        }
        const std::string name = s->trials[0].name();
        if (!manager_->AddMeasurement(name, Loss(c + r, 1)).ok()) ++failures;
        if (!manager_->AddMeasurement(name, Loss(c, 2)).ok()) ++failures;
        // Without a final measurement: the last one reported becomes final.
        if (!manager_->CompleteTrial(name, std::nullopt, false, "").ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  // Four writes per round trip (the last one also completes the study).
  const int64_t writes = 4 * kClients * kRounds;
  const int64_t syncs = SyncedWrites(store_.get()) - syncs_before;
  EXPECT_LT(syncs, writes) << "no two writes shared a sync";
  RecordProperty("writes", static_cast<int>(writes));
  RecordProperty("synced_writes", static_cast<int>(syncs));

  auto check = [&] {
    auto page = manager_->ListTrials(study->name(), 0, "", true);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->trials.size(), static_cast<size_t>(kClients * kRounds));
    std::set<int64_t> ids;
    for (const Trial& t : page->trials) {
      ids.insert(t.id());
      EXPECT_EQ(t.state(), Trial::SUCCEEDED) << t.name();
      ASSERT_EQ(t.measurements_size(), 2) << t.name();
      EXPECT_EQ(t.final_measurement().step_count(), 2) << t.name();
    }
    EXPECT_EQ(ids.size(), static_cast<size_t>(kClients * kRounds));
    auto s = manager_->GetStudy(study->name());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->state(), Study::COMPLETED);
    EXPECT_EQ(s->succeeded_count(), kClients * kRounds);
  };
  check();
  Reopen();
  check();
}

// Forwards to a real store, sleeping a random 0-300 us before every enqueue.
// A manager that queued its writes outside the study's mutex would then land
// them out of order; queued under the mutex, the order must hold.
class DelayingStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueUpdateStudy(
      int64_t id, const Study& study) override {
    Delay();
    return ForwardingStore::EnqueueUpdateStudy(id, study);
  }
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t id, const std::vector<Trial>& t,
      const TrialSummary* summary) override {
    Delay();
    return ForwardingStore::EnqueuePutTrials(id, t, summary);
  }
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueAppendMeasurements(
      const std::vector<MeasurementWrite>& m) override {
    Delay();
    return ForwardingStore::EnqueueAppendMeasurements(m);
  }

 private:
  static void Delay() {
    thread_local std::mt19937 rng(std::random_device{}());
    std::this_thread::sleep_for(std::chrono::microseconds(
        std::uniform_int_distribution<int>(0, 300)(rng)));
  }
};

TEST_F(StudyManagerTest, RacingUpdatesOfOneTrialLeaveTheLastInMemoryOnDisk) {
  DelayingStore delaying(store_.get());
  manager_.reset();
  auto opened = StudyManager::Open(&delaying, StudyManagerOptions());
  ASSERT_TRUE(opened.ok()) << opened.status();
  manager_ = std::move(*opened);
  auto study = manager_->CreateStudy(BraninStudy("race", 0));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok());
  const std::string name = r->trials[0].name();
  // Several rounds of racing updates; after each, the record on disk must be
  // the one in memory (every update was acknowledged, so it is durable).
  constexpr int kRounds = 12;
  constexpr int kThreads = 8;
  constexpr int kUpdates = 8;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int u = 0; u < kUpdates; ++u) {
          cairn::v1::TrialJob job;
          job.set_message(
              absl::StrCat("round ", round, " thread ", t, " update ", u));
          job.set_attempts(t * kUpdates + u);
          if (!manager_->UpdateTrialJob(name, job).ok()) ++failures;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(failures.load(), 0);
    auto in_memory = manager_->GetTrialBasic(name);
    ASSERT_TRUE(in_memory.ok());
    auto on_disk = store_->LoadAll();
    ASSERT_TRUE(on_disk.ok());
    ASSERT_EQ(on_disk->size(), 1u);
    ASSERT_EQ((*on_disk)[0].trials.size(), 1u);
    ASSERT_EQ((*on_disk)[0].trials[0].job().message(),
              in_memory->job().message())
        << "round " << round;
  }
  auto in_memory = manager_->GetTrialBasic(name);
  ASSERT_TRUE(in_memory.ok());
  Reopen();  // Drops the manager before `delaying` goes.
  auto after = manager_->GetTrialBasic(name);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->job().message(), in_memory->job().message());
  EXPECT_EQ(after->job().attempts(), in_memory->job().attempts());
}

TEST_F(StudyManagerTest,
       AFailedWriteIsRefusedReadsServeTheDiskAndWritesResume) {
  auto study = manager_->CreateStudy(BraninStudy("fail", 0));
  ASSERT_TRUE(study.ok());
  auto r = manager_->SuggestTrials(study->name(), 1, "");
  ASSERT_TRUE(r.ok());
  const std::string name = r->trials[0].name();
  ASSERT_TRUE(manager_->AddMeasurement(name, Loss(3, 1)).ok());

  auto* rocks = static_cast<RocksDbStore*>(store_.get());
  rocks->TEST_FailWrites();
  auto done = manager_->CompleteTrial(name, Loss(1), false, "");
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(done.status().message()),
              HasSubstr("injected write failure"));
  EXPECT_THAT(std::string(done.status().message()), HasSubstr(dir_.path()));
  // Reads answer with what is on disk: the completion never landed.
  auto t = manager_->GetTrial(name);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->state(), Trial::ACTIVE);
  EXPECT_EQ(t->measurements_size(), 1);
  auto s = manager_->GetStudy(study->name());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->state(), Study::ACTIVE);
  // Writes are refused with the store's error while it stays failed.
  EXPECT_EQ(manager_->SuggestTrials(study->name(), 1, "x").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(manager_->AddMeasurement(name, Loss(2, 2)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(manager_->JobStudies().empty());
  EXPECT_FALSE(manager_->CheckWritable().ok());

  // The disk works again: the next write resumes the store, no restart
  // (the manager asks the store at most once a second).
  rocks->TEST_FailWrites(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(manager_->CheckWritable().ok());
  auto again = manager_->CompleteTrial(name, Loss(1), false, "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->state(), Trial::SUCCEEDED);
  ASSERT_TRUE(manager_->SuggestTrials(study->name(), 1, "y").ok());

  // What was acknowledged is what a restart finds.
  Reopen();
  auto after = manager_->GetTrial(name);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->state(), Trial::SUCCEEDED);
  EXPECT_EQ(after->measurements_size(), 1);
  auto trials = manager_->ListTrials(study->name(), 0, "", false);
  ASSERT_TRUE(trials.ok());
  EXPECT_EQ(trials->trials.size(), 2u);
}

// Writers and readers keep going while the store fails for a while and then
// recovers: every acknowledged report is on disk afterwards (also after a
// restart), and writes work again without reopening. Runs under
// ThreadSanitizer (label concurrency), which checks the rebuild of memory
// from the store racing with the clients.
TEST_F(StudyManagerTest, ConcurrentClientsSurviveAStoreFailureAndRecovery) {
  auto study = manager_->CreateStudy(BraninStudy("flaky", 0, 4));
  ASSERT_TRUE(study.ok());
  constexpr int kWriters = 4;
  std::vector<std::string> trials;
  std::vector<int64_t> trial_ids;
  for (int w = 0; w < kWriters; ++w) {
    auto r = manager_->SuggestTrials(study->name(), 1, absl::StrCat("w", w));
    ASSERT_TRUE(r.ok());
    trials.push_back(r->trials[0].name());
    trial_ids.push_back(r->trials[0].id());
  }
  auto* rocks = static_cast<RocksDbStore*>(store_.get());
  std::atomic<bool> done{false};
  std::vector<std::vector<int64_t>> acked(kWriters);
  std::vector<std::atomic<int64_t>> acks(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int64_t step = 0; !done.load(); ++step) {
        if (manager_->AddMeasurement(trials[w], Loss(1.0 / (step + 1), step))
                .ok()) {
          acked[w].push_back(step);
          ++acks[w];
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (!done.load()) manager_->GetStudy(study->name()).IgnoreError();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rocks->TEST_FailWrites();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  rocks->TEST_FailWrites(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_TRUE(manager_->CheckWritable().ok());
  std::vector<int64_t> at_recovery;
  for (int w = 0; w < kWriters; ++w) at_recovery.push_back(acks[w].load());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  done = true;
  for (std::thread& t : threads) t.join();

  Reopen();
  int64_t study_id = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      absl::string_view(study->name()).substr(strlen("studies/")), &study_id));
  for (int w = 0; w < kWriters; ++w) {
    // From the store: GetTrial returns only the last measurements.
    auto ms = store_->ListMeasurements(study_id, trial_ids[w]);
    ASSERT_TRUE(ms.ok()) << ms.status();
    std::set<int64_t> on_disk;
    for (const Measurement& m : *ms) on_disk.insert(m.step_count());
    for (int64_t step : acked[w]) {
      ASSERT_EQ(on_disk.count(step), 1u) << trials[w] << " step " << step;
    }
    // Reports were acknowledged again after the recovery.
    EXPECT_GT(acks[w].load(), at_recovery[w]) << trials[w];
  }
  EXPECT_TRUE(manager_->GetStudy(study->name()).ok());
}

}  // namespace
}  // namespace cairn
