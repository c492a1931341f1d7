// TrialTable: the counts and indexes stay equal to what a scan of the trials
// gives, through inserts, state changes, client changes and erases.
#include "trials/trial_table.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cairn {
namespace {

using cairn::v1::Trial;

Trial MakeTrial(int64_t id, Trial::State state, const std::string& client) {
  Trial t;
  t.set_id(id);
  t.set_state(state);
  t.set_client_id(client);
  return t;
}

std::vector<int64_t> Ids(const std::vector<const Trial*>& trials) {
  std::vector<int64_t> ids;
  for (const Trial* t : trials) ids.push_back(t->id());
  return ids;
}

// Checks every index of `table` against a scan of `model`.
void ExpectMatches(const TrialTable& table,
                   const std::map<int64_t, Trial>& model) {
  ASSERT_EQ(table.size(), model.size());
  std::map<int, int64_t> counts;
  std::vector<int64_t> all, pending;
  std::map<std::string, std::vector<int64_t>> by_client;
  for (const auto& [id, t] : model) {
    ++counts[t.state()];
    all.push_back(id);
    if (api::IsPendingState(t.state())) {
      pending.push_back(id);
      if (!t.client_id().empty()) by_client[t.client_id()].push_back(id);
    }
  }
  for (int s = Trial::State_MIN; s <= Trial::State_MAX; ++s) {
    if (!Trial::State_IsValid(s)) continue;
    EXPECT_EQ(table.count(static_cast<Trial::State>(s)), counts[s])
        << Trial::State_Name(static_cast<Trial::State>(s));
  }
  EXPECT_EQ(table.pending(), static_cast<int64_t>(pending.size()));
  EXPECT_EQ(Ids(table.InIdOrder()), all);
  EXPECT_EQ(Ids(table.Pending()), pending);
  for (const char* c : {"a", "b", "c"}) {
    EXPECT_EQ(Ids(table.PendingOf(c)), by_client[c]) << c;
  }
  EXPECT_TRUE(table.PendingOf("nobody").empty());
  for (const auto& [id, t] : model) {
    auto it = table.find(id);
    ASSERT_NE(it, table.end());
    EXPECT_EQ(it->second.state(), t.state());
  }
}

TEST(TrialTableTest, CountsFollowStateChanges) {
  TrialTable table;
  table.Put(MakeTrial(1, Trial::ACTIVE, "a"));
  table.Put(MakeTrial(2, Trial::ACTIVE, "a"));
  table.Put(MakeTrial(3, Trial::REQUESTED, ""));
  EXPECT_EQ(table.pending(), 3);
  EXPECT_EQ(Ids(table.PendingOf("a")), (std::vector<int64_t>{1, 2}));

  table.Put(MakeTrial(1, Trial::SUCCEEDED, "a"));
  EXPECT_EQ(table.pending(), 2);
  EXPECT_EQ(table.count(Trial::SUCCEEDED), 1);
  EXPECT_EQ(table.count(Trial::ACTIVE), 1);
  EXPECT_EQ(Ids(table.PendingOf("a")), (std::vector<int64_t>{2}));

  table.Put(MakeTrial(2, Trial::STOPPING, "a"));
  EXPECT_EQ(table.pending(), 2);
  EXPECT_EQ(Ids(table.PendingOf("a")), (std::vector<int64_t>{2}));
  table.Put(MakeTrial(2, Trial::FAILED, "a"));
  EXPECT_TRUE(table.PendingOf("a").empty());
  EXPECT_EQ(table.count(Trial::FAILED), 1);

  EXPECT_TRUE(table.Erase(3));
  EXPECT_FALSE(table.Erase(3));
  EXPECT_EQ(table.pending(), 0);
  EXPECT_EQ(Ids(table.InIdOrder()), (std::vector<int64_t>{1, 2}));
}

TEST(TrialTableTest, PointersSurviveReplaceAndOutOfOrderInsert) {
  TrialTable table;
  table.Put(MakeTrial(5, Trial::ACTIVE, "a"));
  const Trial* five = table.InIdOrder()[0];
  table.Put(MakeTrial(5, Trial::SUCCEEDED, "a"));
  EXPECT_EQ(table.InIdOrder()[0], five);
  EXPECT_EQ(five->state(), Trial::SUCCEEDED);
  table.Put(MakeTrial(2, Trial::ACTIVE, "b"));  // Older id, loaded late.
  table.Put(MakeTrial(9, Trial::ACTIVE, "b"));
  EXPECT_EQ(Ids(table.InIdOrder()), (std::vector<int64_t>{2, 5, 9}));
  EXPECT_EQ(Ids(table.PendingOf("b")), (std::vector<int64_t>{2, 9}));
}

// Random operations against a plain map that is scanned for every figure.
TEST(TrialTableTest, RandomOperationsMatchAScan) {
  std::mt19937 rng(7);
  const std::vector<Trial::State> states = {Trial::REQUESTED,  Trial::ACTIVE,
                                            Trial::STOPPING,   Trial::SUCCEEDED,
                                            Trial::INFEASIBLE, Trial::FAILED};
  const std::vector<std::string> clients = {"", "a", "b", "c"};
  TrialTable table;
  std::map<int64_t, Trial> model;
  for (int step = 0; step < 2000; ++step) {
    const int op = std::uniform_int_distribution<int>(0, 9)(rng);
    const int64_t id = std::uniform_int_distribution<int64_t>(1, 60)(rng);
    if (op == 0) {
      EXPECT_EQ(table.Erase(id), model.erase(id) == 1);
    } else {
      Trial t = MakeTrial(id, states[rng() % states.size()],
                          clients[rng() % clients.size()]);
      model[id] = t;
      table.Put(t);
    }
    if (step % 50 == 0) ExpectMatches(table, model);
  }
  ExpectMatches(table, model);
}

}  // namespace
}  // namespace cairn
