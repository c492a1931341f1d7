// Replica clusters: expansion, GPU and port placement, TF_CONFIG and the
// PyTorch variables each replica sees.
#include "jobs/tf_config.h"

#include <set>
#include <string>
#include <vector>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cairn::jobs {
namespace {

using nlohmann::json;

cairn::v1::TrialJobTemplate Template(const std::string& text) {
  cairn::v1::TrialJobTemplate t;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &t));
  return t;
}

// MASTER 1, WORKER 2, PARAMETER_SERVER 1, EVALUATOR 1, listed out of order.
constexpr char kCustom[] = R"pb(
  replicas { type: EVALUATOR count: 1 }
  replicas { type: WORKER count: 2 gpus_per_replica: 1 }
  replicas { type: PARAMETER_SERVER count: 1 }
  replicas { type: MASTER count: 1 gpus_per_replica: 2 }
)pb";

std::vector<ReplicaTask> Placed(const cairn::v1::TrialJobTemplate& t,
                                const std::vector<int>& gpus) {
  std::vector<ReplicaTask> r = ExpandReplicas(t);
  EXPECT_TRUE(PlaceReplicas(t, gpus, r).ok());
  return r;
}

TEST(TfConfigTest, ExpandsMasterFirstThenWorkersPsEvaluators) {
  std::vector<ReplicaTask> r = ExpandReplicas(Template(kCustom));
  std::vector<std::string> names;
  for (const ReplicaTask& t : r) names.push_back(t.Name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"master-replica-0", "worker-replica-0",
                                      "worker-replica-1", "ps-replica-0",
                                      "evaluator-replica-0"}));
  EXPECT_TRUE(r[0].is_master());
  EXPECT_EQ(r[2].type, "worker");
  EXPECT_EQ(r[2].index, 1);
  EXPECT_EQ(r[3].type, "ps");

  std::vector<ReplicaTask> one = ExpandReplicas(Template("gpus_per_trial: 2"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].type, "master");
}

TEST(TfConfigTest, GpusAreDealtPerReplicaAndPortsAreDistinct) {
  const auto t = Template(kCustom);
  EXPECT_EQ(TrialGpuCount(t), 4);
  EXPECT_EQ(TrialGpuCount(Template("gpus_per_trial: 3")), 3);
  std::vector<ReplicaTask> r = Placed(t, {4, 5, 6, 7});
  EXPECT_EQ(r[0].gpus, (std::vector<int>{4, 5}));
  EXPECT_EQ(r[1].gpus, (std::vector<int>{6}));
  EXPECT_EQ(r[2].gpus, (std::vector<int>{7}));
  EXPECT_TRUE(r[3].gpus.empty());
  std::set<int> ports;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GT(r[i].port, 0) << r[i].Name();
    ports.insert(r[i].port);
  }
  EXPECT_EQ(ports.size(), 4u);
  EXPECT_EQ(r[4].port, 0) << "evaluators are not in the cluster";

  std::vector<ReplicaTask> one = Placed(Template("gpus_per_trial: 2"), {1, 3});
  EXPECT_EQ(one[0].gpus, (std::vector<int>{1, 3}));
  EXPECT_GT(one[0].port, 0);
}

TEST(TfConfigTest, TfConfigAsAiPlatformSetsIt) {
  std::vector<ReplicaTask> r = Placed(Template(kCustom), {0, 1, 2, 3});
  const json c =
      json::parse(TfConfigJson(r, r[2], "7", R"({"scaleTier": "CUSTOM"})"));
  const std::string addr = "127.0.0.1:";
  EXPECT_EQ(c["cluster"]["master"],
            json::array({addr + std::to_string(r[0].port)}));
  EXPECT_EQ(c["cluster"]["worker"],
            json::array({addr + std::to_string(r[1].port),
                         addr + std::to_string(r[2].port)}));
  EXPECT_EQ(c["cluster"]["ps"],
            json::array({addr + std::to_string(r[3].port)}));
  EXPECT_FALSE(c["cluster"].contains("evaluator"));
  EXPECT_FALSE(c["cluster"].contains("chief"));
  EXPECT_EQ(c["task"],
            json({{"type", "worker"}, {"index", 1}, {"trial", "7"}}));
  EXPECT_EQ(c["job"], json({{"scaleTier", "CUSTOM"}}));
  EXPECT_EQ(c["environment"], "cloud");

  // Every replica sees the same cluster.
  const json ps = json::parse(TfConfigJson(r, r[3], "7", "{}"));
  EXPECT_EQ(ps["cluster"], c["cluster"]);
  EXPECT_EQ(ps["task"]["type"], "ps");
  EXPECT_EQ(ps["task"]["index"], 0);
  const json ev = json::parse(TfConfigJson(r, r[4], "7", "not json"));
  EXPECT_EQ(ev["task"]["type"], "evaluator");
  EXPECT_EQ(ev["job"], json::object());
}

TEST(TfConfigTest, UseChiefInTfConfigNamesTheMasterChief) {
  auto t = Template(kCustom);
  t.set_use_chief_in_tf_config(true);
  std::vector<ReplicaTask> r = Placed(t, {0, 1, 2, 3});
  const json c = json::parse(TfConfigJson(r, r[0], "2", "{}"));
  EXPECT_TRUE(c["cluster"].contains("chief"));
  EXPECT_FALSE(c["cluster"].contains("master"));
  EXPECT_EQ(c["task"]["type"], "chief");
  EXPECT_EQ(c["task"]["trial"], "2");
  EXPECT_EQ(r[0].Name(), "master-replica-0");
}

TEST(TfConfigTest, TorchRanksMasterZeroWorkersFromOne) {
  std::vector<ReplicaTask> r = Placed(Template(kCustom), {0, 1, 2, 3});
  const std::string master_port = std::to_string(r[0].port);
  for (size_t i = 0; i < r.size(); ++i) {
    auto env = TorchEnv(r, r[i]);
    EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(env["MASTER_PORT"], master_port);
    EXPECT_EQ(env["WORLD_SIZE"], "3") << "master + 2 workers";
    if (i <= 2) {
      EXPECT_EQ(env["RANK"], std::to_string(i)) << r[i].Name();
    } else {
      EXPECT_EQ(env.count("RANK"), 0u) << r[i].Name();
    }
  }
}

TEST(TfConfigTest, PickFreePortsGivesDistinctPorts) {
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(5);
  ASSERT_TRUE(ports.ok()) << ports.status();
  EXPECT_EQ(std::set<int>(ports->begin(), ports->end()).size(), 5u);
}

TEST(TfConfigTest, RelocatesTheClusterOntoOtherHostsAndPorts) {
  const cairn::v1::TrialJobTemplate t = Template(kCustom);
  const std::vector<ReplicaTask> r = Placed(t, {0, 1, 2, 3});
  const std::string worker1 = TfConfigJson(r, r[2], "7", "{}");
  EXPECT_EQ(TfConfigTask(worker1), (std::pair<std::string, int>("worker", 1)));
  EXPECT_EQ(TfConfigTask("not json"), (std::pair<std::string, int>("", -1)));
  const std::string moved =
      RelocateTfConfig(worker1, {{{"master", 0}, "10.0.0.1:2000"},
                                 {{"worker", 1}, "10.0.0.2:2001"},
                                 {{"evaluator", 0}, "10.0.0.3:2002"}});
  const json j = json::parse(moved);
  EXPECT_EQ(j["cluster"]["master"], json({"10.0.0.1:2000"}));
  // Unnamed addresses stay; the task and the rest are untouched.
  EXPECT_EQ(j["cluster"]["worker"][0],
            json::parse(worker1)["cluster"]["worker"][0]);
  EXPECT_EQ(j["cluster"]["worker"][1], "10.0.0.2:2001");
  EXPECT_FALSE(j["cluster"].contains("evaluator"));
  EXPECT_EQ(j["task"], json::parse(worker1)["task"]);
  EXPECT_EQ(j["environment"], "cloud");
  EXPECT_EQ(RelocateTfConfig("{bad", {}), "{bad");
}

}  // namespace
}  // namespace cairn::jobs
