// Tests of the RocksDB store against a real database in a fresh temporary
// directory per test, including a kill -9 crash test and a cross-process lock
// test (both re-exec this binary as the child; see main()).
#include "store/store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"
#include "store/summary_record.h"
#include "tests/testing/run_all_tests.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace keys = store_keys;

// ---------------------------------------------------------------- helpers

// Size of the largest RocksDB write-ahead log file (*.log) in `dir`.
uintmax_t LargestWalBytes(const std::string& dir) {
  uintmax_t largest = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") {
      largest = std::max(largest, e.file_size());
    }
  }
  return largest;
}

cairn::v1::Study MakeStudy(const std::string& display_name) {
  cairn::v1::Study study;
  study.set_display_name(display_name);
  study.set_state(cairn::v1::Study::ACTIVE);
  cairn::v1::ParameterSpec* p = study.mutable_spec()->add_parameters();
  p->set_parameter_id("lr");
  p->set_type(cairn::v1::ParameterSpec::DOUBLE);
  p->set_min_value(1e-4);
  p->set_max_value(1.0);
  p->set_scale_type(cairn::v1::ParameterSpec::UNIT_LOG_SCALE);
  cairn::v1::MetricSpec* m = study.mutable_spec()->add_metrics();
  m->set_metric_id("loss");
  m->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  study.mutable_spec()->set_seed(42);
  study.mutable_create_time()->set_seconds(1700000000);
  return study;
}

// testing::MakeTrial with a client id and a label.
cairn::v1::Trial MakeTrial(int64_t id, double lr) {
  cairn::v1::Trial trial = testing::MakeTrial(id, lr);
  trial.set_client_id("worker-0");
  (*trial.mutable_labels())["k"] = "v";
  return trial;
}

std::vector<int64_t> Steps(const std::vector<cairn::v1::Measurement>& ms) {
  std::vector<int64_t> steps;
  for (const auto& m : ms) steps.push_back(m.step_count());
  return steps;
}

// Reads every key of the database at `path` with plain RocksDB. The store must
// be closed.
std::vector<std::string> AllKeys(const std::string& path) {
  rocksdb::Options options;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, path, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> result;
  if (!s.ok()) return result;
  std::unique_ptr<rocksdb::DB> db(raw);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    result.push_back(it->key().ToString());
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return result;
}

// Reads one key of the database at `path` with plain RocksDB ("" if absent).
// The store must be closed.
std::string RawGet(const std::string& path, const std::string& key) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &raw);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return "";
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  s = db->Get({}, key, &value);
  EXPECT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
  return value;
}

// Runs this test binary as a child process with `args` (see main()).
pid_t RunChild(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"/proc/self/exe"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // Exec at once: the parent has threads (RocksDB's), so the forked image is
    // only good for async-signal-safe calls.
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  return pid;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "cairn_store_test_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr) << strerror(errno);
    dir_ = templ;
    path_ = dir_ + "/db";
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void OpenStore(bool sync = true) {
    store_.reset();
    StoreOptions options;
    options.sync = sync;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, path_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(store).value();
  }

  std::vector<StoredStudy> Load() {
    absl::StatusOr<std::vector<StoredStudy>> all = store_->LoadAll();
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() ? *std::move(all) : std::vector<StoredStudy>{};
  }

  std::vector<cairn::v1::Measurement> List(int64_t study, int64_t trial) {
    auto ms = store_->ListMeasurements(study, trial);
    EXPECT_TRUE(ms.ok()) << ms.status();
    return ms.ok() ? *std::move(ms) : std::vector<cairn::v1::Measurement>{};
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

// ------------------------------------------------------------------ keys

TEST(StoreKeysTest, HexIdsSortNumerically) {
  EXPECT_EQ(keys::HexId(0), "0000000000000000");
  EXPECT_EQ(keys::HexId(255), "00000000000000ff");
  EXPECT_EQ(keys::HexId(INT64_MAX), "7fffffffffffffff");
  EXPECT_LT(keys::StudyKey(9), keys::StudyKey(10));
  EXPECT_LT(keys::StudyKey(255), keys::StudyKey(256));
  EXPECT_LT(keys::MeasurementKey(1, 2, 15), keys::MeasurementKey(1, 2, 16));
  // A trial's keys sort before the next trial's.
  EXPECT_LT(keys::MeasurementKey(1, 2, INT64_MAX),
            keys::MeasurementKey(1, 3, 0));
  EXPECT_EQ(keys::TrialKey(1, 2), "t/0000000000000001/0000000000000002");
  EXPECT_EQ(keys::NameKey("my study"), "n/my study");
}

TEST(StoreKeysTest, ParseRoundTripAndRejectsMalformed) {
  int64_t s = 0, t = 0, q = 0;
  ASSERT_TRUE(keys::ParseMeasurementKey(keys::MeasurementKey(7, 0x1234, 99), &s,
                                        &t, &q));
  EXPECT_EQ(s, 7);
  EXPECT_EQ(t, 0x1234);
  EXPECT_EQ(q, 99);
  ASSERT_TRUE(keys::ParseTrialKey(keys::TrialKey(3, 4), &s, &t));
  EXPECT_EQ(s, 3);
  EXPECT_EQ(t, 4);
  ASSERT_TRUE(keys::ParseStudyKey(keys::StudyKey(5), &s));
  EXPECT_EQ(s, 5);
  ASSERT_TRUE(keys::ParseMaxTrialKey(keys::MaxTrialKey(6), &s));
  EXPECT_EQ(s, 6);

  EXPECT_FALSE(keys::ParseHexId("000000000000000G", &s));
  EXPECT_FALSE(keys::ParseHexId("000000000000000A", &s));  // Upper case.
  EXPECT_FALSE(keys::ParseHexId("ffffffffffffffff", &s));  // > INT64_MAX.
  EXPECT_FALSE(keys::ParseHexId("01", &s));
  EXPECT_FALSE(keys::ParseStudyKey(keys::StudyKey(5) + "x", &s));
  EXPECT_FALSE(keys::ParseStudyKey(keys::MaxTrialKey(5), &s));
  EXPECT_FALSE(keys::ParseTrialKey(keys::StudyKey(5), &s, &t));
  EXPECT_FALSE(keys::ParseMeasurementKey(keys::MeasurementTrialPrefix(1, 2), &s,
                                         &t, &q));
  EXPECT_EQ(keys::PrefixEnd("m/0000000000000001/"), "m/00000000000000010");
}

// --------------------------------------------------------------- studies

TEST_F(StoreTest, CreateStudyRoundTrip) {
  OpenStore();
  cairn::v1::Study study = MakeStudy("mnist");
  absl::StatusOr<int64_t> id = store_->CreateStudy(study);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 1);

  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].study_id, 1);
  EXPECT_EQ(all[0].max_trial_id, 0);
  EXPECT_TRUE(all[0].trials.empty());
  study.set_name("studies/1");
  EXPECT_EQ(all[0].study.SerializeAsString(), study.SerializeAsString());
}

TEST_F(StoreTest, StudyIdsPersistAcrossReopen) {
  OpenStore();
  ASSERT_EQ(*store_->CreateStudy(MakeStudy("a")), 1);
  ASSERT_EQ(*store_->CreateStudy(MakeStudy("b")), 2);
  OpenStore();
  ASSERT_EQ(*store_->CreateStudy(MakeStudy("c")), 3);
  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i].study_id, i + 1);
    EXPECT_EQ(all[i].study.name(), absl::StrCat("studies/", i + 1));
    EXPECT_EQ(all[i].study.display_name(), std::string(1, 'a' + i));
  }
}

TEST_F(StoreTest, StudyIdsSortNumericallyBeyondOneHexDigit) {
  OpenStore(/*sync=*/false);
  for (int i = 1; i <= 20; ++i) {
    ASSERT_EQ(*store_->CreateStudy(MakeStudy(absl::StrCat("s", i))), i);
  }
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(all[i].study_id, i + 1);
}

TEST_F(StoreTest, DuplicateDisplayNameIsAlreadyExists) {
  OpenStore();
  ASSERT_TRUE(store_->CreateStudy(MakeStudy("dup")).ok());
  absl::StatusOr<int64_t> again = store_->CreateStudy(MakeStudy("dup"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("dup"));
  // Still taken after a reopen; the failed call consumed no visible study.
  OpenStore();
  EXPECT_EQ(store_->CreateStudy(MakeStudy("dup")).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Load().size(), 1u);

  absl::StatusOr<int64_t> empty = store_->CreateStudy(MakeStudy(""));
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("display_name"));
}

TEST_F(StoreTest, UpdateStudy) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("upd"));
  cairn::v1::Study study = Load()[0].study;
  study.set_state(cairn::v1::Study::COMPLETED);
  study.set_inactive_reason("max_trials (5) reached");
  ASSERT_TRUE(store_->UpdateStudy(id, study).ok());
  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].study.state(), cairn::v1::Study::COMPLETED);
  EXPECT_EQ(all[0].study.inactive_reason(), "max_trials (5) reached");
  EXPECT_EQ(all[0].study.name(), "studies/1");

  cairn::v1::Study renamed = study;
  renamed.set_display_name("other");
  absl::Status st = store_->UpdateStudy(id, renamed);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("display_name"));
  EXPECT_EQ(store_->UpdateStudy(99, study).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->UpdateStudy(0, study).code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- trials

TEST_F(StoreTest, PutTrialsRoundTripInIdOrderWithoutMeasurements) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("t"));
  cairn::v1::Trial t3 = MakeTrial(3, 0.3);
  *t3.add_measurements() = testing::Loss(0.5, 1);  // Must not be stored.
  *t3.mutable_final_measurement() = testing::Loss(0.1, 10);
  ASSERT_TRUE(store_->PutTrials(id, {t3, MakeTrial(1, 0.1)}).ok());
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(17, 0.17)}).ok());
  // Overwrite trial 1.
  cairn::v1::Trial t1 = MakeTrial(1, 0.1);
  t1.set_state(cairn::v1::Trial::SUCCEEDED);
  ASSERT_TRUE(store_->PutTrials(id, {t1}).ok());

  for (int pass = 0; pass < 2; ++pass) {
    std::vector<StoredStudy> all = Load();
    ASSERT_EQ(all.size(), 1u);
    ASSERT_EQ(all[0].trials.size(), 3u);
    EXPECT_EQ(all[0].trials[0].id(), 1);
    EXPECT_EQ(all[0].trials[0].state(), cairn::v1::Trial::SUCCEEDED);
    EXPECT_EQ(all[0].trials[1].id(), 3);
    EXPECT_EQ(all[0].trials[2].id(), 17);
    EXPECT_EQ(all[0].trials[1].measurements_size(), 0);
    EXPECT_EQ(all[0].trials[1].final_measurement().step_count(), 10);
    EXPECT_EQ(all[0].trials[1].labels().at("k"), "v");
    EXPECT_EQ(all[0].max_trial_id, 17);
    EXPECT_TRUE(List(id, 3).empty());
    OpenStore();
  }
}

TEST(StoreSummaryRecordTest, RoundTripsOddMetricIdsAndRejectsGarbage) {
  TrialSummary summary;
  summary.count_by_state[cairn::v1::Trial::SUCCEEDED] = 199998;
  summary.count_by_state[cairn::v1::Trial::ACTIVE] = 2;
  summary.best_by_metric["loss"] = 0.1 + 0.2;  // Needs all 17 digits.
  summary.best_by_metric["top 1\nacc"] = -1e-300;
  summary.live_jobs_of_ended = 3;
  TrialSummary back;
  ASSERT_TRUE(keys::DecodeSummary(keys::EncodeSummary(summary), &back));
  EXPECT_EQ(back, summary);
  EXPECT_EQ(back.total(), 200000);
  EXPECT_EQ(back.pending(), 2);
  EXPECT_FALSE(keys::DecodeSummary("s 4 -1\n", &back));
  EXPECT_FALSE(keys::DecodeSummary("s 99 1\n", &back));
  EXPECT_FALSE(keys::DecodeSummary("x 4 1\n", &back));
  EXPECT_FALSE(keys::DecodeSummary("b nan? loss\n", &back));
  EXPECT_FALSE(keys::DecodeSummary("j -1 live_jobs_of_ended\n", &back));
  EXPECT_FALSE(keys::DecodeSummary("j 1 jobs\n", &back));
}

TEST_F(StoreTest, SummaryRecordGoesWithTheTrialWritesThatCarryIt) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("sum"));
  TrialSummary one;
  one.count_by_state[cairn::v1::Trial::ACTIVE] = 1;
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(1, 0.1)}, &one).ok());
  auto studies = store_->LoadStudies();
  ASSERT_TRUE(studies.ok()) << studies.status();
  ASSERT_EQ(studies->size(), 1u);
  EXPECT_TRUE((*studies)[0].trials.empty()) << "LoadStudies reads no trial";
  EXPECT_EQ((*studies)[0].max_trial_id, 1);
  ASSERT_TRUE((*studies)[0].summary.has_value());
  EXPECT_EQ(*(*studies)[0].summary, one);

  // A trial write without a summary drops the record (the next start
  // rebuilds it); one with a summary writes it again.
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(2, 0.2)}).ok());
  EXPECT_FALSE((*store_->LoadStudies())[0].summary.has_value());
  TrialSummary two;
  two.count_by_state[cairn::v1::Trial::ACTIVE] = 2;
  auto queued = store_->EnqueuePutTrials(id, {MakeTrial(2, 0.2)}, &two);
  ASSERT_TRUE(queued.ok());
  ASSERT_TRUE(store_->Await(*queued).ok());
  EXPECT_EQ(*(*store_->LoadStudies())[0].summary, two);
  ASSERT_TRUE(store_->DeleteTrial(id, 2, &one).ok());

  OpenStore();
  auto study = store_->LoadStudy(id);
  ASSERT_TRUE(study.ok()) << study.status();
  ASSERT_EQ(study->trials.size(), 1u);
  EXPECT_EQ(study->trials[0].id(), 1);
  EXPECT_EQ(study->max_trial_id, 2);
  EXPECT_EQ(*study->summary, one);
  EXPECT_EQ(store_->LoadStudy(id + 1).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(store_->DeleteStudy(id).ok());
  const std::string key = keys::SummaryKey(id);
  store_.reset();
  std::unique_ptr<rocksdb::DB> db;
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(
        rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path_, &raw).ok());
    db.reset(raw);
  }
  std::string value;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).IsNotFound())
      << "DeleteStudy leaves its summary record";
}

TEST_F(StoreTest, PutTrialsErrors) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("t"));
  EXPECT_EQ(store_->PutTrials(42, {MakeTrial(1, 0.1)}).code(),
            absl::StatusCode::kNotFound);
  absl::Status st = store_->PutTrials(id, {MakeTrial(1, 0.1), MakeTrial(0, 1)});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("trials[1].id"));
  // The batch is all or nothing.
  EXPECT_TRUE(Load()[0].trials.empty());
}

TEST_F(StoreTest, MaxTrialIdNeverDecreases) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("t"));
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(9, 0.9)}).ok());
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(2, 0.2)}).ok());
  EXPECT_EQ(Load()[0].max_trial_id, 9);
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(12, 0.12)}).ok());
  EXPECT_EQ(Load()[0].max_trial_id, 12);
}

TEST_F(StoreTest, DeleteTrialKeepsMaxIdAcrossReopen) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("t"));
  ASSERT_TRUE(
      store_->PutTrials(id, {MakeTrial(1, 0.1), MakeTrial(2, 0.2)}).ok());
  ASSERT_TRUE(store_
                  ->AppendMeasurements({{id, 2, testing::Loss(1.0, 1)},
                                        {id, 1, testing::Loss(2.0, 1)}})
                  .ok());
  ASSERT_TRUE(store_->DeleteTrial(id, 2).ok());
  EXPECT_EQ(store_->DeleteTrial(id, 2).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteTrial(id, 5).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteTrial(77, 1).code(), absl::StatusCode::kNotFound);
  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].trials.size(), 1u);
  EXPECT_EQ(all[0].trials[0].id(), 1);
  EXPECT_EQ(all[0].max_trial_id, 2);
  EXPECT_TRUE(List(id, 2).empty());
  EXPECT_THAT(Steps(List(id, 1)), ElementsAre(1));

  // Deleting the last remaining trial still keeps the max id.
  ASSERT_TRUE(store_->DeleteTrial(id, 1).ok());
  OpenStore();
  all = Load();
  EXPECT_TRUE(all[0].trials.empty());
  EXPECT_EQ(all[0].max_trial_id, 2);
  // It is recorded under k/ as documented.
  store_.reset();
  EXPECT_EQ(RawGet(path_, keys::MaxTrialKey(id)), "2");
}

TEST_F(StoreTest, DeleteTrialAfterReopenKeepsMaxIdOfLargestTrial) {
  // The max id cache starts cold after a reopen: deleting the largest trial
  // must still record its id.
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("t"));
  ASSERT_TRUE(
      store_->PutTrials(id, {MakeTrial(4, 0.4), MakeTrial(8, 0.8)}).ok());
  OpenStore();
  ASSERT_TRUE(store_->DeleteTrial(id, 8).ok());
  OpenStore();
  EXPECT_EQ(Load()[0].max_trial_id, 8);
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(5, 0.5)}).ok());
  OpenStore();
  std::vector<StoredStudy> all = Load();
  EXPECT_EQ(all[0].max_trial_id, 8);
  ASSERT_EQ(all[0].trials.size(), 2u);
  EXPECT_EQ(all[0].trials[1].id(), 5);
}

// ---------------------------------------------------------- measurements

TEST_F(StoreTest, MeasurementOrderSurvivesReopenAndAppendsContinue) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("m"));
  ASSERT_TRUE(
      store_->PutTrials(id, {MakeTrial(1, 0.1), MakeTrial(2, 0.2)}).ok());
  // Interleaved in one batch; 20 entries so seqs pass a hex digit boundary.
  std::vector<Store::MeasurementWrite> batch;
  for (int i = 0; i < 20; ++i) {
    batch.push_back({id, 1, testing::Loss(i, 100 - i)});
    if (i % 4 == 0) batch.push_back({id, 2, testing::Loss(i, i)});
  }
  ASSERT_TRUE(store_->AppendMeasurements(batch).ok());
  ASSERT_TRUE(store_->AppendMeasurements({{id, 1, testing::Loss(7, 7)}}).ok());

  std::vector<int64_t> want1;
  for (int i = 0; i < 20; ++i) want1.push_back(100 - i);
  want1.push_back(7);
  EXPECT_EQ(Steps(List(id, 1)), want1);
  EXPECT_THAT(Steps(List(id, 2)), ElementsAre(0, 4, 8, 12, 16));

  // After a reopen the sequence cache is rebuilt from disk: new appends go
  // after the old ones rather than overwriting them.
  OpenStore();
  EXPECT_EQ(Steps(List(id, 1)), want1);
  ASSERT_TRUE(store_
                  ->AppendMeasurements({{id, 2, testing::Loss(0, 50)},
                                        {id, 1, testing::Loss(0, -1)},
                                        {id, 2, testing::Loss(0, 51)}})
                  .ok());
  want1.push_back(-1);
  EXPECT_EQ(Steps(List(id, 1)), want1);
  EXPECT_THAT(Steps(List(id, 2)), ElementsAre(0, 4, 8, 12, 16, 50, 51));
  std::vector<cairn::v1::Measurement> ms = List(id, 1);
  ASSERT_EQ(ms[3].metrics_size(), 1);
  EXPECT_EQ(ms[3].metrics(0).metric_id(), "loss");
  EXPECT_EQ(ms[3].metrics(0).value(), 3.0);
}

// Pages through trial 1 with ScanMeasurements, `page` at a time, in the
// given direction; returns the steps seen and checks the seqs are ordered.
std::vector<int64_t> ScanSteps(Store* store, int64_t study, bool reverse,
                               int page) {
  std::vector<int64_t> steps;
  Store::MeasurementScan scan;
  scan.reverse = reverse;
  scan.start_seq = reverse ? INT64_MAX : 0;
  for (bool more = true; more;) {
    int seen = 0;
    more = false;
    absl::Status st = store->ScanMeasurements(
        study, 1, scan, [&](int64_t seq, const cairn::v1::Measurement& m) {
          if (seen == page) {
            scan.start_seq = seq;  // The next page starts here.
            more = true;
            return false;
          }
          ++seen;
          steps.push_back(m.step_count());
          return true;
        });
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok()) break;
  }
  return steps;
}

TEST_F(StoreTest, ScanMeasurementsPagesBothWaysAndStaysInTrial) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("m"));
  // Trial 2's measurements sort right after trial 1's: a scan must not see
  // them, nor (backward) those of trial 1 from trial 2.
  std::vector<Store::MeasurementWrite> batch;
  std::vector<int64_t> want;
  for (int i = 0; i < 37; ++i) {
    batch.push_back({id, 1, testing::Loss(i, i)});
    batch.push_back({id, 2, testing::Loss(i, 1000 + i)});
    want.push_back(i);
  }
  ASSERT_TRUE(store_->AppendMeasurements(batch).ok());
  EXPECT_EQ(ScanSteps(store_.get(), id, false, 10), want);
  EXPECT_EQ(ScanSteps(store_.get(), id, false, 1000), want);
  std::reverse(want.begin(), want.end());
  EXPECT_EQ(ScanSteps(store_.get(), id, true, 7), want);

  // A forward scan from a seq past the end, and a trial without
  // measurements, visit nothing.
  int visits = 0;
  auto count = [&](int64_t, const cairn::v1::Measurement&) {
    ++visits;
    return true;
  };
  EXPECT_TRUE(store_->ScanMeasurements(id, 1, {1000, false}, count).ok());
  EXPECT_TRUE(store_->ScanMeasurements(id, 3, {INT64_MAX, true}, count).ok());
  EXPECT_EQ(visits, 0);
}

TEST_F(StoreTest, ScanMeasurementsErrors) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("m"));
  auto visit = [](int64_t, const cairn::v1::Measurement&) { return true; };
  absl::Status st = store_->ScanMeasurements(id + 1, 1, {}, visit);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  st = store_->ScanMeasurements(id, 0, {}, visit);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("trial_id"));
  st = store_->ScanMeasurements(id, 1, {-3, false}, visit);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("start_seq: must be >= 0, got -3"));
}

TEST_F(StoreTest, AppendMeasurementsErrors) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("m"));
  EXPECT_TRUE(store_->AppendMeasurements({}).ok());
  absl::Status st = store_->AppendMeasurements(
      {{id, 1, testing::Loss(1, 1)}, {id + 1, 1, testing::Loss(2, 2)}});
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(st.message(), HasSubstr("studies/2"));
  st = store_->AppendMeasurements({{id, 0, testing::Loss(1, 1)}});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("measurements[0].trial_id"));
  // Nothing of the failed batches landed.
  EXPECT_TRUE(List(id, 1).empty());
  EXPECT_EQ(store_->ListMeasurements(id + 1, 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, ConcurrentAppendMeasurementsAllLand) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("c"));
  constexpr int kThreads = 4;
  constexpr int kBatches = 60;
  constexpr int kPerBatch = 5;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        // Trial 1 is shared by all threads; trial 10 + t is this thread's.
        std::vector<Store::MeasurementWrite> batch;
        for (int i = 0; i < kPerBatch; ++i) {
          const int64_t step = t * 1000000 + b * kPerBatch + i;
          batch.push_back({id, 1, testing::Loss(0, step)});
          batch.push_back({id, 10 + t, testing::Loss(0, step)});
        }
        if (!store_->AppendMeasurements(batch).ok()) ++failures;
        if (!store_->PutTrials(id, {MakeTrial(10 + t + 4 * b, 0)}).ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);

  OpenStore();
  std::vector<cairn::v1::Measurement> shared = List(id, 1);
  ASSERT_EQ(shared.size(),
            static_cast<size_t>(kThreads * kBatches * kPerBatch));
  // Each thread's measurements keep their order within the shared trial.
  std::vector<int64_t> last(kThreads, -1);
  for (const auto& m : shared) {
    const int t = static_cast<int>(m.step_count() / 1000000);
    const int64_t n = m.step_count() % 1000000;
    ASSERT_EQ(n, last[t] + 1) << "thread " << t;
    last[t] = n;
  }
  for (int t = 0; t < kThreads; ++t) {
    std::vector<cairn::v1::Measurement> own = List(id, 10 + t);
    ASSERT_EQ(own.size(), static_cast<size_t>(kBatches * kPerBatch));
    for (size_t i = 0; i < own.size(); ++i) {
      EXPECT_EQ(own[i].step_count(), t * 1000000 + static_cast<int64_t>(i));
    }
  }
  // Concurrent PutTrials raised the max trial id to the largest id written.
  EXPECT_EQ(Load()[0].max_trial_id, 10 + 3 + 4 * (kBatches - 1));
}

// ------------------------------------------------------- ordered group commit

RocksDbStore* Rocks(Store* store) { return static_cast<RocksDbStore*>(store); }

TEST_F(StoreTest, QueuedWritesAreCommittedInOneSyncInQueueOrder) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("q"));
  const int64_t syncs_before = Rocks(store_.get())->TEST_SyncedWrites();
  // Ten successive full-record puts of trial 5 plus measurements, all queued
  // before anybody waits: one leader writes them as one group.
  std::vector<std::shared_ptr<PendingWrite>> writes;
  for (int i = 0; i < 10; ++i) {
    cairn::v1::Trial t = MakeTrial(5, 0.1);
    (*t.mutable_labels())["version"] = absl::StrCat(i);
    absl::StatusOr<std::shared_ptr<PendingWrite>> w =
        store_->EnqueuePutTrials(id, {t});
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_NE(*w, nullptr);
    writes.push_back(*w);
    w = store_->EnqueueAppendMeasurements({{id, 5, testing::Loss(1, i)}});
    ASSERT_TRUE(w.ok()) << w.status();
    writes.push_back(*w);
  }
  // Awaiting the last one makes every earlier one durable too.
  ASSERT_TRUE(store_->Await(writes.back()).ok());
  for (const auto& w : writes) EXPECT_TRUE(store_->Await(w).ok());
  EXPECT_EQ(Rocks(store_.get())->TEST_SyncedWrites() - syncs_before, 1);

  // Nothing to write: nullptr, and awaiting it is OK.
  absl::StatusOr<std::shared_ptr<PendingWrite>> none =
      store_->EnqueuePutTrials(id, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  EXPECT_TRUE(store_->Await(*none).ok());
  // Validation errors come back from the enqueue; nothing is queued.
  EXPECT_EQ(store_->EnqueuePutTrials(99, {MakeTrial(1, 0.1)}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->EnqueueAppendMeasurements({{id, 0, testing::Loss(1, 0)}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].trials.size(), 1u);
  EXPECT_EQ(all[0].trials[0].labels().at("version"), "9");
  EXPECT_EQ(all[0].max_trial_id, 5);
  EXPECT_THAT(Steps(List(id, 5)), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
}

TEST_F(StoreTest, ConcurrentWritersShareSyncsAndKeepTheInMemoryOrder) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("g"));
  const int64_t syncs_before = Rocks(store_.get())->TEST_SyncedWrites();
  // Like StudyManager: each thread changes the "in-memory" version of trial 1
  // and enqueues its full record under one mutex, then waits outside it.
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  absl::Mutex mu;
  int64_t version = 0;  // Guarded by mu.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        std::shared_ptr<PendingWrite> mine;
        {
          absl::MutexLock lock(&mu);
          cairn::v1::Trial trial = MakeTrial(1, 0.5);
          (*trial.mutable_labels())["version"] = absl::StrCat(++version);
          // This thread's own trial too (all must land).
          absl::StatusOr<std::shared_ptr<PendingWrite>> w =
              store_->EnqueuePutTrials(
                  id, {trial, MakeTrial(100 + t * kRounds + r, 0.1)});
          if (!w.ok()) {
            ++failures;
            continue;
          }
          mine = *w;
        }
        if (!store_->Await(mine).ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  const int64_t writes = kThreads * kRounds;
  const int64_t syncs = Rocks(store_.get())->TEST_SyncedWrites() - syncs_before;
  EXPECT_GE(syncs, 1);
  EXPECT_LT(syncs, writes) << "no two writes shared a sync";
  RecordProperty("writes", static_cast<int>(writes));
  RecordProperty("synced_writes", static_cast<int>(syncs));

  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].trials.size(), static_cast<size_t>(writes + 1));
  EXPECT_EQ(all[0].trials[0].id(), 1);
  // The last change made in memory is the one on disk.
  EXPECT_EQ(all[0].trials[0].labels().at("version"), absl::StrCat(writes));
  EXPECT_EQ(all[0].max_trial_id, 100 + writes - 1);
  // k/ values are enqueued in the order they were raised, so the last one
  // on disk is the largest.
  store_.reset();
  EXPECT_EQ(RawGet(path_, keys::MaxTrialKey(id)),
            absl::StrCat(100 + writes - 1));
}

TEST_F(StoreTest, DeleteTrialSeesATrialWhoseWriteIsStillQueued) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("d"));
  absl::StatusOr<std::shared_ptr<PendingWrite>> w =
      store_->EnqueuePutTrials(id, {MakeTrial(3, 0.3)});
  ASSERT_TRUE(w.ok());
  // Not awaited yet: DeleteTrial drains the queue before it checks.
  ASSERT_TRUE(store_->DeleteTrial(id, 3).ok());
  EXPECT_TRUE(store_->Await(*w).ok());
  OpenStore();
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].trials.empty());
  EXPECT_EQ(all[0].max_trial_id, 3);
}

TEST_F(StoreTest, AFailedWriteFailsEveryLaterWriteAndNothingLands) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("f"));
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(1, 0.1)}).ok());
  Rocks(store_.get())->TEST_FailWrites();
  absl::StatusOr<std::shared_ptr<PendingWrite>> a =
      store_->EnqueuePutTrials(id, {MakeTrial(2, 0.2)});
  absl::StatusOr<std::shared_ptr<PendingWrite>> b =
      store_->EnqueueAppendMeasurements({{id, 1, testing::Loss(1, 0)}});
  ASSERT_TRUE(a.ok() && b.ok());
  absl::Status sa = store_->Await(*a);
  EXPECT_FALSE(sa.ok());
  EXPECT_THAT(std::string(sa.message()), HasSubstr("injected write failure"));
  EXPECT_FALSE(store_->Await(*b).ok());
  // The store now refuses every write, naming the cause.
  absl::Status later = store_->PutTrials(id, {MakeTrial(3, 0.3)});
  EXPECT_EQ(later.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(later.message()), HasSubstr("store write failed"));
  EXPECT_THAT(std::string(later.message()),
              HasSubstr("injected write failure"));
  EXPECT_EQ(store_->UpdateStudy(id, MakeStudy("f")).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(store_->CreateStudy(MakeStudy("g")).status().code(),
            absl::StatusCode::kUnavailable);
  // Reads still work.
  EXPECT_TRUE(store_->ListMeasurements(id, 1).ok());

  OpenStore();  // A reopened store writes again.
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].trials.size(), 1u);
  EXPECT_EQ(all[0].trials[0].id(), 1);
  EXPECT_TRUE(List(id, 1).empty());
  EXPECT_TRUE(store_->PutTrials(id, {MakeTrial(4, 0.4)}).ok());
}

// --------------------------------------------------------------- deletion

TEST_F(StoreTest, DeleteStudyRemovesEverythingAndIdsAreNotReused) {
  OpenStore();
  const int64_t keep = *store_->CreateStudy(MakeStudy("keep"));
  const int64_t gone = *store_->CreateStudy(MakeStudy("gone"));
  for (int64_t s : {keep, gone}) {
    ASSERT_TRUE(
        store_->PutTrials(s, {MakeTrial(1, 0.1), MakeTrial(2, 0.2)}).ok());
    ASSERT_TRUE(store_
                    ->AppendMeasurements({{s, 1, testing::Loss(1, 1)},
                                          {s, 2, testing::Loss(2, 2)}})
                    .ok());
  }
  ASSERT_TRUE(store_->DeleteStudy(gone).ok());
  EXPECT_EQ(store_->DeleteStudy(gone).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListMeasurements(gone, 1).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->PutTrials(gone, {MakeTrial(3, 0)}).code(),
            absl::StatusCode::kNotFound);
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].study_id, keep);
  EXPECT_EQ(all[0].trials.size(), 2u);
  EXPECT_THAT(Steps(List(keep, 2)), ElementsAre(2));

  // No key of the deleted study is left on disk.
  store_.reset();
  int keys_of_kept_study = 0;
  for (const std::string& key : AllKeys(path_)) {
    for (const std::string& prefix :
         {keys::StudyKey(gone), keys::MaxTrialKey(gone),
          keys::TrialStudyPrefix(gone), keys::MeasurementStudyPrefix(gone),
          keys::NameKey("gone")}) {
      EXPECT_FALSE(absl::StartsWith(key, prefix)) << key;
    }
    if (absl::StrContains(key, keys::HexId(keep))) ++keys_of_kept_study;
  }
  // s/, k/, 2 t/ and 2 m/ keys of the kept study.
  EXPECT_EQ(keys_of_kept_study, 6);

  // A new study gets a fresh id (also after reopen), and the display name of
  // the deleted study is free again.
  OpenStore();
  absl::StatusOr<int64_t> again = store_->CreateStudy(MakeStudy("gone"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 3);
  EXPECT_TRUE(List(*again, 1).empty());
  all = Load();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].study_id, 3);
  EXPECT_EQ(all[1].max_trial_id, 0);
}

// ------------------------------------------------------- open and schema

TEST_F(StoreTest, SchemaVersionIsRecordedAndNewerVersionIsRejected) {
  OpenStore();
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), path_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    ASSERT_TRUE(db->Get({}, "meta/schema_version", &value).ok());
    EXPECT_EQ(value, "2");
    ASSERT_TRUE(db->Put({}, "meta/schema_version", "3").ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), path_);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 3"));
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 2"));
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
}

TEST_F(StoreTest, Version1StoreTrustsNoSummaryUntilMarkedComplete) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("v1"));
  TrialSummary one;
  one.count_by_state[cairn::v1::Trial::ACTIVE] = 1;
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(1, 0.1)}, &one).ok());
  store_.reset();
  {
    // As an older binary would leave it: version 1 (and a c/ record it may
    // have let go stale).
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), path_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put({}, "meta/schema_version", "1").ok());
  }
  OpenStore();
  EXPECT_FALSE((*store_->LoadStudies())[0].summary.has_value());
  EXPECT_FALSE(store_->LoadStudy(id)->summary.has_value());
  ASSERT_TRUE(store_->MarkSummariesComplete().ok());
  OpenStore();
  EXPECT_EQ(*(*store_->LoadStudies())[0].summary, one);
  EXPECT_EQ(*store_->LoadStudy(id)->summary, one);
}

TEST_F(StoreTest, SecondOpenWhileOpenFailsNamingThePath) {
  OpenStore();
  absl::StatusOr<std::unique_ptr<Store>> second =
      Store::Open(StoreOptions(), path_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(path_));
  EXPECT_THAT(second.status().message(), HasSubstr("locked"));

  // Another process gets the same answer.
  pid_t pid = RunChild({"--open_child", path_});
  ASSERT_GT(pid, 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus),
            static_cast<int>(absl::StatusCode::kUnavailable));

  // Once closed, it opens again.
  store_.reset();
  OpenStore();
}

TEST_F(StoreTest, OpenWithoutCreateIfMissingIsNotFound) {
  StoreOptions options;
  options.create_if_missing = false;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, path_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(Store::Open(StoreOptions(), "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, ApproximateSizeGrowsWithData) {
  OpenStore(/*sync=*/false);
  const uint64_t before = store_->ApproximateSizeBytes();
  const int64_t id = *store_->CreateStudy(MakeStudy("size"));
  std::vector<Store::MeasurementWrite> batch;
  for (int i = 0; i < 1000; ++i) {
    batch.push_back({id, 1, testing::Loss(i, i)});
  }
  ASSERT_TRUE(store_->AppendMeasurements(batch).ok());
  const uint64_t after = store_->ApproximateSizeBytes();
  EXPECT_GT(after, before + 1000 * 10);
  EXPECT_LT(after, 10u << 20);
}

// ------------------------------------------------------------ crash test

// The child (see CrashChildMain) acknowledges write k by sending k over the
// pipe once the call returned OK. Write 2(i-1) puts trial i; write 2(i-1)+1
// appends a measurement with step 0 to trial i, then one with step i to
// trial 1 (so trial 1 holds steps 0, 1, 2, ...).
constexpr int kCrashAcksBeforeKill = 120;

TEST_F(StoreTest, WalKeepsItsPreallocatedSizeUntilClosed) {
  // A stable WAL size spares every synced commit an inode write; a clean
  // close trims the file to its data.
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("wal"));
  ASSERT_TRUE(store_->PutTrials(id, {MakeTrial(1, 0.1)}).ok());
  EXPECT_GT(LargestWalBytes(path_), 1u << 20);
  store_.reset();
  EXPECT_LT(LargestWalBytes(path_), 1u << 20);
  OpenStore();
  ASSERT_EQ(Load()[0].trials.size(), 1u);
}

TEST_F(StoreTest, KillNineLosesNoAcknowledgedWrite) {
  OpenStore();
  const int64_t id = *store_->CreateStudy(MakeStudy("crash"));
  ASSERT_EQ(id, 1);
  store_.reset();

  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  // The write end must survive exec.
  ASSERT_EQ(fcntl(fds[1], F_SETFD, 0), 0);
  pid_t pid = RunChild({"--crash_child", path_, std::to_string(fds[1])});
  ASSERT_GT(pid, 0);
  close(fds[1]);

  int64_t acked = -1;  // Highest acknowledged write index.
  bool killed = false;
  int32_t k;
  while (true) {
    ssize_t n = read(fds[0], &k, sizeof(k));
    if (n == 0) break;  // Child gone.
    if (n < 0 && errno == EINTR) continue;
    ASSERT_EQ(n, static_cast<ssize_t>(sizeof(k)));
    ASSERT_EQ(k, acked + 1);
    acked = k;
    if (!killed && acked + 1 >= kCrashAcksBeforeKill) {
      ASSERT_EQ(kill(pid, SIGKILL), 0);
      killed = true;  // Keep reading: acks sent before the kill still count.
    }
  }
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(killed) << "child exited early, status " << wstatus;
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
  ASSERT_GE(acked + 1, kCrashAcksBeforeKill);

  // The WAL had its preallocated size (store/wal_file_system.h), so the
  // crash left a zeroed tail that recovery must read past.
  EXPECT_GT(LargestWalBytes(path_), 1u << 20);

  OpenStore();
  const int64_t acked_trials = acked / 2 + 1;     // Writes 0, 2, 4, ...
  const int64_t acked_appends = (acked + 1) / 2;  // Writes 1, 3, 5, ...
  std::vector<StoredStudy> all = Load();
  ASSERT_EQ(all.size(), 1u);
  // At most one more write (in flight at the kill) may have landed.
  ASSERT_GE(static_cast<int64_t>(all[0].trials.size()), acked_trials);
  ASSERT_LE(static_cast<int64_t>(all[0].trials.size()), acked_trials + 1);
  for (size_t i = 0; i < all[0].trials.size(); ++i) {
    EXPECT_EQ(all[0].trials[i].id(), static_cast<int64_t>(i + 1));
  }
  EXPECT_EQ(all[0].max_trial_id, static_cast<int64_t>(all[0].trials.size()));

  std::vector<int64_t> steps = Steps(List(id, 1));
  // Trial 1 got step 0 (its own) first, then steps 1, 2, ... in order.
  ASSERT_GE(static_cast<int64_t>(steps.size()), acked_appends + 1);
  ASSERT_LE(static_cast<int64_t>(steps.size()), acked_appends + 2);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i], static_cast<int64_t>(i));
  }
  for (int64_t t = 2; t <= acked_appends; ++t) {
    EXPECT_THAT(Steps(List(id, t)), ElementsAre(0)) << "trial " << t;
  }
  // Appends continue after the crash.
  ASSERT_TRUE(store_->AppendMeasurements({{id, 1, testing::Loss(0, -5)}}).ok());
  EXPECT_EQ(Steps(List(id, 1)).back(), -5);
  EXPECT_EQ(List(id, 1).size(), steps.size() + 1);
}

// -------------------------------------------------------- child processes

// Opens the store and writes until killed, acknowledging each write on fd.
int CrashChildMain(const std::string& path, int fd) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), path);
  if (!store.ok()) {
    fprintf(stderr, "crash child: %s\n", store.status().ToString().c_str());
    return 2;
  }
  int32_t k = 0;
  for (int64_t i = 1; i <= 100000; ++i) {
    if (!(*store)->PutTrials(1, {MakeTrial(i, 0.5)}).ok()) return 3;
    if (write(fd, &k, sizeof(k)) != sizeof(k)) return 4;
    ++k;
    if (!(*store)
             ->AppendMeasurements(
                 {{1, i, testing::Loss(0, 0)}, {1, 1, testing::Loss(0, i)}})
             .ok()) {
      return 3;
    }
    if (write(fd, &k, sizeof(k)) != sizeof(k)) return 4;
    ++k;
  }
  return 0;
}

// Tries to open the store; the exit code is the status code.
int OpenChildMain(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), path);
  if (!store.ok()) {
    fprintf(stderr, "open child: %s\n", store.status().ToString().c_str());
  }
  return static_cast<int>(store.status().code());
}

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--crash_child") {
    return cairn::CrashChildMain(argv[2], atoi(argv[3]));
  }
  if (argc == 3 && std::string(argv[1]) == "--open_child") {
    return cairn::OpenChildMain(argv[2]);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return cairn::testing::RunAllTests();
}
