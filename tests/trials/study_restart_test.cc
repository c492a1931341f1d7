// Restart in constant time: StudyManager::Open reads no trial (only the
// studies and their c/ summary records), a study's trials are read when it is
// first used, and a study loaded that way behaves exactly as one that never
// left memory.
#include <atomic>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace cairn {
namespace {

using cairn::testing::Loss;
using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::Trial;

// Counts every read of trials or measurements.
class CountingStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<std::vector<StoredStudy>> LoadAll() override {
    ++load_all;
    return ForwardingStore::LoadAll();
  }
  absl::StatusOr<StoredStudy> LoadStudy(int64_t id) override {
    ++load_study;
    absl::MutexLock lock(&mu);
    loaded_ids.push_back(id);
    return ForwardingStore::LoadStudy(id);
  }
  absl::StatusOr<std::vector<Measurement>> ListMeasurements(
      int64_t id, int64_t trial_id) override {
    ++list_measurements;
    return ForwardingStore::ListMeasurements(id, trial_id);
  }
  int trial_reads() const { return load_all + load_study + list_measurements; }

  std::atomic<int> load_all{0};
  std::atomic<int> load_study{0};
  std::atomic<int> list_measurements{0};
  absl::Mutex mu;
  std::vector<int64_t> loaded_ids ABSL_GUARDED_BY(mu);
};

class FixedClock : public util::Clock {
 public:
  absl::Time Now() override { return absl::FromUnixSeconds(1'700'000'000); }
};

Study BraninStudy(const std::string& name, int max_trials, int max_parallel) {
  Study study;
  study.set_display_name(name);
  *study.mutable_spec() = testing::BraninSpec();
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  study.mutable_spec()->set_seed(11);
  study.mutable_spec()->set_max_trials(max_trials);
  study.mutable_spec()->set_max_parallel_trials(max_parallel);
  return study;
}

// A store and a manager over it (through a CountingStore) that can restart.
class Node {
 public:
  explicit Node(std::string dir) : dir_(std::move(dir)) { Restart(); }

  void Restart() {
    manager_.reset();
    counting_.reset();
    store_.reset();
    auto store = Store::Open(StoreOptions(), dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    counting_ = std::make_unique<CountingStore>(store_.get());
    StudyManagerOptions options;
    options.clock = &clock_;
    auto manager = StudyManager::Open(counting_.get(), options);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
  }

  StudyManager& manager() { return *manager_; }
  CountingStore& counting() { return *counting_; }
  Store& store() { return *store_; }

 private:
  const std::string dir_;
  FixedClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CountingStore> counting_;
  std::unique_ptr<StudyManager> manager_;
};

// Three studies: two finished ones and one with a pending trial that has
// reported. Returns the studies' names.
std::vector<std::string> Populate(StudyManager& m) {
  std::vector<std::string> names;
  for (int s = 0; s < 3; ++s) {
    auto study = m.CreateStudy(BraninStudy("study" + std::to_string(s), 4, 0));
    EXPECT_TRUE(study.ok()) << study.status();
    names.push_back(study->name());
    auto r = m.SuggestTrials(study->name(), 4, "w");
    EXPECT_TRUE(r.ok()) << r.status();
    const size_t complete = s < 2 ? 4 : 3;
    for (size_t i = 0; i < r->trials.size(); ++i) {
      const std::string& t = r->trials[i].name();
      EXPECT_TRUE(m.AddMeasurement(t, Loss(1.0 + i, 1)).ok());
      if (i < complete) {
        EXPECT_TRUE(m.CompleteTrial(t, Loss(0.5 + i, 2), false, "").ok());
      }
    }
  }
  return names;
}

TEST(StudyRestartTest, StartupReadsNoTrialAndCountsComeFromTheSummaries) {
  testing::TempDir dir;
  Node node(dir.path());
  const std::vector<std::string> names = Populate(node.manager());
  std::vector<Study> before;
  for (const std::string& n : names)
    before.push_back(*node.manager().GetStudy(n));

  node.Restart();
  CountingStore& c = node.counting();
  EXPECT_EQ(c.trial_reads(), 0) << "Open read trials or measurements";
  // Everything a dashboard or `cairn study list` asks stays without reads.
  EXPECT_EQ(node.manager().num_studies(), 3);
  EXPECT_EQ(node.manager().num_trials(), 12);
  for (size_t i = 0; i < names.size(); ++i) {
    auto s = node.manager().GetStudy(names[i]);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->DebugString(), before[i].DebugString());
  }
  auto page = node.manager().ListStudies(0, "");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->studies.size(), 3u);
  const std::vector<StudySummary> summaries = node.manager().Summaries();
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[2].trials_by_state.at("SUCCEEDED"), 3);
  EXPECT_EQ(summaries[2].trials_by_state.at("ACTIVE"), 1);
  EXPECT_DOUBLE_EQ(summaries[0].best_by_metric.at("loss"), 0.5);
  EXPECT_EQ(c.trial_reads(), 0);

  // The first trial call loads that study only, once.
  auto trials = node.manager().ListTrials(names[1], 0, "", false);
  ASSERT_TRUE(trials.ok()) << trials.status();
  EXPECT_EQ(trials->trials.size(), 4u);
  EXPECT_TRUE(node.manager().ListTrials(names[1], 0, "", false).ok());
  EXPECT_EQ(c.load_study.load(), 1);
  absl::MutexLock lock(&c.mu);
  EXPECT_EQ(c.loaded_ids, std::vector<int64_t>{2});
}

TEST(StudyRestartTest, OldStoreGetsItsSummariesOnceThenStartsWithoutReads) {
  testing::TempDir dir;
  {
    // A store as written before the c/ records existed: trials only.
    auto store = Store::Open(StoreOptions(), dir.path());
    ASSERT_TRUE(store.ok());
    auto id = (*store)->CreateStudy(BraninStudy("old", 0, 0));
    ASSERT_TRUE(id.ok());
    std::vector<Trial> trials;
    for (int i = 1; i <= 5; ++i) {
      Trial t;
      t.set_id(i);
      t.set_state(i <= 4 ? Trial::SUCCEEDED : Trial::ACTIVE);
      if (i <= 4) *t.mutable_final_measurement() = Loss(10.0 - i, 1);
      trials.push_back(t);
    }
    ASSERT_TRUE((*store)->PutTrials(*id, trials).ok());
  }
  Node node(dir.path());
  EXPECT_EQ(node.counting().load_study.load(), 1) << "builds the summary";
  auto s = node.manager().LookupStudy("old");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->trial_count(), 5);
  EXPECT_EQ(s->succeeded_count(), 4);
  EXPECT_EQ(s->pending_count(), 1);
  auto stored = node.store().LoadStudies();
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE((*stored)[0].summary.has_value());
  EXPECT_EQ((*stored)[0].summary->best_by_metric.at("loss"), 6.0);

  node.Restart();
  EXPECT_EQ(node.counting().trial_reads(), 0);
  EXPECT_EQ(node.manager().GetStudy(s->name())->DebugString(),
            s->DebugString());
}

// Trials without what depends on the wall time of the suggestion.
std::vector<std::string> Comparable(std::vector<Trial> trials) {
  std::vector<std::string> out;
  for (Trial& t : trials) {
    t.clear_metadata();
    out.push_back(t.DebugString());
  }
  return out;
}

// Runs the same calls on a manager that restarts midway (`lazy`) and on one
// that never does (`eager`): every answer must be the same.
TEST(StudyRestartTest, LazilyLoadedStudyBehavesIdentically) {
  testing::TempDir eager_dir;
  testing::TempDir lazy_dir;
  Node eager(eager_dir.path());
  Node lazy(lazy_dir.path());
  std::string name;
  for (Node* n : {&eager, &lazy}) {
    auto s = n->manager().CreateStudy(BraninStudy("same", 6, 3));
    ASSERT_TRUE(s.ok());
    name = s->name();
    auto r = n->manager().SuggestTrials(name, 2, "a");
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(n->manager()
                    .CompleteTrial(r->trials[0].name(), Loss(3.5, 1), false, "")
                    .ok());
    ASSERT_TRUE(
        n->manager().AddMeasurement(r->trials[1].name(), Loss(2.5, 1)).ok());
  }
  lazy.Restart();
  ASSERT_EQ(lazy.counting().trial_reads(), 0);

  auto same = [&](auto call) {
    auto a = call(eager.manager());
    auto b = call(lazy.manager());
    ASSERT_EQ(a.ok(), b.ok()) << a.status() << " vs " << b.status();
    if (!a.ok()) {
      EXPECT_EQ(a.status(), b.status());
      return;
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(*a)>, SuggestResult>) {
      EXPECT_EQ(Comparable(a->trials), Comparable(b->trials));
      EXPECT_EQ(a->study_state, b->study_state);
      EXPECT_EQ(a->message, b->message);
    } else if constexpr (std::is_same_v<std::decay_t<decltype(*a)>, Trial>) {
      EXPECT_EQ(Comparable({*a}), Comparable({*b}));
    } else {
      EXPECT_EQ(a->DebugString(), b->DebugString());
    }
  };
  auto get = [&](StudyManager& m) { return m.GetStudy(name); };
  same(get);
  // Client "a" gets its pending trial back: the last measurement became its
  // default final one.
  same([&](StudyManager& m) { return m.SuggestTrials(name, 1, "a"); });
  same([&](StudyManager& m) {
    return m.CompleteTrial(name + "/trials/2", std::nullopt, false, "");
  });
  // Parallelism (3), then the budget (6): same trials, same refusals.
  same([&](StudyManager& m) { return m.SuggestTrials(name, 5, "b"); });
  same([&](StudyManager& m) { return m.SuggestTrials(name, 1, "c"); });
  for (int id = 3; id <= 5; ++id) {
    same([&](StudyManager& m) {
      return m.CompleteTrial(name + "/trials/" + std::to_string(id),
                             Loss(1.0 * id, 1), false, "");
    });
  }
  same([&](StudyManager& m) { return m.SuggestTrials(name, 4, "d"); });
  same([&](StudyManager& m) {
    return m.CompleteTrial(name + "/trials/6", Loss(0.25, 1), false, "");
  });
  same([&](StudyManager& m) { return m.SuggestTrials(name, 1, "e"); });
  same(get);
  EXPECT_EQ(eager.manager().GetStudy(name)->state(), Study::COMPLETED);
  auto best_a = eager.manager().ListOptimalTrials(name);
  auto best_b = lazy.manager().ListOptimalTrials(name);
  ASSERT_TRUE(best_a.ok() && best_b.ok());
  EXPECT_EQ(Comparable(*best_a), Comparable(*best_b));

  // And after one more restart of both, the summaries still match.
  eager.Restart();
  lazy.Restart();
  same(get);
  EXPECT_EQ(lazy.counting().trial_reads(), 0);
}

}  // namespace
}  // namespace cairn
