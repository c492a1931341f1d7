// What a suggestion costs the store and the study: concurrent suggestions of
// one study share WAL syncs through the store's group commit (no study lock,
// gate or pool thread is held across a sync), and a RANDOM_SEARCH or
// QUASI_RANDOM_SEARCH suggestion reads the pending trials only, however
// many trials the study holds. Syncs are counted by the fault-injection
// file system, which also holds the first one so that the others queue
// behind it deterministically; reads are counted through the observer.
#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "api/resource_names.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/fault_file_system.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/study_manager_fixture.h"
#include "tests/testing/test_util.h"
#include "trials/observer.h"
#include "trials/study_manager.h"

namespace cairn {
namespace {

using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

// Counts the trial writes the manager queues.
class CountingStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::EnqueuePutTrials;
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t id, const std::vector<Trial>& trials,
      const TrialSummary* summary) override {
    ++trial_writes_;
    return ForwardingStore::EnqueuePutTrials(id, trials, summary);
  }
  int trial_writes() const { return trial_writes_.load(); }

 private:
  std::atomic<int> trial_writes_{0};
};

// Records how many trials each suggestion handed its designer.
class HistoryObserver : public StudyObserver {
 public:
  void OnSuggestionHistory(const std::string& algorithm,
                           int64_t trials) override {
    absl::MutexLock lock(&mu_);
    last_[algorithm] = trials;
  }
  int64_t last(const std::string& algorithm) {
    absl::MutexLock lock(&mu_);
    auto it = last_.find(algorithm);
    return it == last_.end() ? -1 : it->second;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int64_t> last_ ABSL_GUARDED_BY(mu_);
};

class SuggestCommitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Open()); }

  void Open() {
    manager_.reset();
    counting_.reset();
    store_.reset();
    StoreOptions store_options;
    store_options.wrap_file_system = testing::FaultFileSystem::Hook(&fs_);
    auto store = Store::Open(store_options, dir_.path());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    counting_ = std::make_unique<CountingStore>(store_.get());
    StudyManagerOptions options;
    options.observer = &observer_;
    options.gp_workers = 1;
    auto manager = StudyManager::Open(counting_.get(), options);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }

  std::string NewStudy(const std::string& name, StudySpec::Algorithm algo) {
    Study study;
    study.set_display_name(name);
    *study.mutable_spec() = testing::BraninSpec();
    study.mutable_spec()->set_algorithm(algo);
    study.mutable_spec()->set_seed(5);
    auto created = manager_->CreateStudy(study);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->name() : "";
  }

  std::future<absl::StatusOr<SuggestResult>> Ask(const std::string& study,
                                                 const std::string& client) {
    return std::async(std::launch::async, [this, study, client] {
      return manager_->SuggestTrials(study, 1, client);
    });
  }

  // Waits (up to 10 s) until the manager has queued `n` trial writes.
  bool AwaitTrialWrites(int n) {
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (counting_->trial_writes() < n) {
      if (absl::Now() > give_up) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  HistoryObserver observer_;
  testing::TempDir dir_;
  std::shared_ptr<testing::FaultFileSystem> fs_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CountingStore> counting_;
  std::unique_ptr<StudyManager> manager_;
};

// N suggestions of one study asked while the first one's WAL sync is held:
// all N queue their writes meanwhile, and once the sync is released the
// other N - 1 become durable together, so N suggestions take 2 syncs.
TEST_F(SuggestCommitTest, ConcurrentRandomSuggestionsShareWalSyncs) {
  constexpr int kClients = 8;
  const std::string study = NewStudy("random", StudySpec::RANDOM_SEARCH);
  const int writes_before = counting_->trial_writes();
  const int64_t syncs_before = fs_->Syncs(testing::kWalFile);
  fs_->StallSyncs(testing::kWalFile);
  std::vector<std::future<absl::StatusOr<SuggestResult>>> calls;
  calls.push_back(Ask(study, "c0"));
  const bool stalled = fs_->AwaitStalledSync(absl::Seconds(10));
  for (int c = 1; c < kClients; ++c) {
    calls.push_back(Ask(study, absl::StrCat("c", c)));
  }
  // A study lock or gate held across c0's sync would keep the others from
  // queueing their writes until it is released.
  const bool queued = AwaitTrialWrites(writes_before + kClients);
  fs_->ReleaseSyncs();
  EXPECT_TRUE(stalled) << "the first suggestion never reached its sync";
  EXPECT_TRUE(queued) << "suggestions waited for another one's WAL sync";
  std::set<int64_t> ids;
  for (auto& call : calls) {
    absl::StatusOr<SuggestResult> r = call.get();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 1u) << r->message;
    ids.insert(r->trials[0].id());
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kClients));
  const int64_t syncs = fs_->Syncs(testing::kWalFile) - syncs_before;
  EXPECT_LE(syncs, 2) << kClients << " suggestions took " << syncs
                      << " WAL syncs";
}

TEST_F(SuggestCommitTest, GpSuggestionsHoldNoStudyOrPoolAcrossASync) {
  const std::string a = NewStudy("gp-a", StudySpec::GP_BANDIT);
  const std::string b = NewStudy("gp-b", StudySpec::GP_BANDIT);
  const int writes_before = counting_->trial_writes();
  const int64_t syncs_before = fs_->Syncs(testing::kWalFile);
  fs_->StallSyncs(testing::kWalFile);
  std::vector<std::future<absl::StatusOr<SuggestResult>>> calls;
  calls.push_back(Ask(a, "a0"));
  const bool stalled = fs_->AwaitStalledSync(absl::Seconds(10));
  // The pool's one worker, the study's gate and its turn in the pool are
  // free while a0's write syncs: another study's and the same study's GP
  // suggestions run their designers and queue their writes meanwhile.
  calls.push_back(Ask(b, "b0"));
  calls.push_back(Ask(a, "a1"));
  const bool queued = AwaitTrialWrites(writes_before + 3);
  fs_->ReleaseSyncs();
  EXPECT_TRUE(stalled) << "the first suggestion never reached its sync";
  EXPECT_TRUE(queued) << "GP suggestions waited for another one's WAL sync";
  for (auto& call : calls) {
    absl::StatusOr<SuggestResult> r = call.get();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 1u) << r->message;
  }
  EXPECT_LE(fs_->Syncs(testing::kWalFile) - syncs_before, 2);
}

// The studies get their trials straight through the store (one write
// each, then a restart), so that a study of 2,000 trials costs no 2,000
// synced round trips.
TEST_F(SuggestCommitTest, RandomSuggestionsReadOnlyThePendingTrials) {
  struct Case {
    std::string name;
    StudySpec::Algorithm algo;
    int trials;
  };
  const std::vector<Case> cases = {
      {"random-small", StudySpec::RANDOM_SEARCH, 20},
      {"random-large", StudySpec::RANDOM_SEARCH, 2000},
      {"quasi-large", StudySpec::QUASI_RANDOM_SEARCH, 2000},
      {"grid-large", StudySpec::GRID_SEARCH, 2000},
  };
  std::vector<std::string> names;
  for (const Case& c : cases) names.push_back(NewStudy(c.name, c.algo));
  manager_.reset();
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<Trial> trials;
    for (int id = 1; id <= cases[i].trials; ++id) {
      Trial t = testing::BraninTrial(-5 + 15.0 * id / cases[i].trials,
                                     15.0 * (id % 97) / 97);
      t.set_id(id);
      t.set_name(absl::StrCat(names[i], "/trials/", id));
      t.set_state(Trial::SUCCEEDED);
      *t.mutable_final_measurement() = testing::Loss(id, 1);
      trials.push_back(std::move(t));
    }
    const absl::StatusOr<int64_t> study_id =
        api::ParseStudyName(names[i], "name");
    ASSERT_TRUE(study_id.ok()) << study_id.status();
    ASSERT_TRUE(store_->PutTrials(*study_id, trials).ok());
  }
  ASSERT_NO_FATAL_FAILURE(Open());
  for (size_t i = 0; i < cases.size(); ++i) {
    // Two pending trials of other clients, then the suggestion measured.
    for (const char* client : {"p0", "p1"}) {
      ASSERT_TRUE(manager_->SuggestTrials(names[i], 1, client).ok());
    }
    auto r = manager_->SuggestTrials(names[i], 1, "measured");
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->trials.size(), 1u) << cases[i].name << ": " << r->message;
    // The sequence goes on after the trials the study holds.
    EXPECT_EQ(r->trials[0].id(), cases[i].trials + 3) << cases[i].name;
    const std::string algorithm = StudySpec::Algorithm_Name(cases[i].algo);
    if (cases[i].algo == StudySpec::GRID_SEARCH) {
      // The grid must know every point taken: it reads every trial.
      EXPECT_EQ(observer_.last(algorithm), cases[i].trials + 2);
    } else {
      EXPECT_EQ(observer_.last(algorithm), 2) << cases[i].name;
    }
  }
}

}  // namespace
}  // namespace cairn
