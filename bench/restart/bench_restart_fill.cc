// Writes a store of finished studies straight through the store layer (no
// RPCs), for bench/restart/run.sh: STUDIES Branin studies sharing TRIALS
// trials, each trial SUCCEEDED with two parameters and a final measurement,
// except the last PENDING of each study, which are ACTIVE with a few
// intermediate measurements (what a restart must find to resume). Like a store
// from before the c/ summary records existed, it has none and schema version
// 1 (so an older cairnd opens it too): cairnd's first start builds them and
// moves it to version 2 (timed separately by run.sh).
//
// Usage: cairn_bench_restart_fill DIR TRIALS [STUDIES=20] [PENDING=2]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cairn/v1/study.pb.h"
#include "rocksdb/db.h"
#include "store/store.h"
#include "tests/testing/test_util.h"

namespace {

using cairn::testing::Loss;
using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::Trial;

constexpr int kBatch = 1000;

Study BraninStudy(int index) {
  Study study;
  study.set_display_name(absl::StrCat("restart-bench-", index));
  study.set_state(Study::ACTIVE);
  study.mutable_create_time()->set_seconds(1'700'000'000);
  cairn::v1::StudySpec* spec = study.mutable_spec();
  for (const char* id : {"x1", "x2"}) {
    auto* p = spec->add_parameters();
    p->set_parameter_id(id);
    p->set_type(cairn::v1::ParameterSpec::DOUBLE);
    p->set_min_value(id[1] == '1' ? -5 : 0);
    p->set_max_value(id[1] == '1' ? 10 : 15);
  }
  auto* metric = spec->add_metrics();
  metric->set_metric_id("loss");
  metric->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  spec->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  spec->set_seed(index);
  return study;
}

Trial MakeTrial(int64_t id, bool pending) {
  Trial t;
  t.set_id(id);
  t.set_state(pending ? Trial::ACTIVE : Trial::SUCCEEDED);
  t.set_client_id("bench-worker");
  t.mutable_start_time()->set_seconds(1'700'000'000 + id);
  for (int p = 0; p < 2; ++p) {
    auto* param = t.add_parameters();
    param->set_parameter_id(p == 0 ? "x1" : "x2");
    param->mutable_value()->set_number_value(0.001 * (id % 10000) + p);
  }
  if (!pending) {
    t.mutable_end_time()->set_seconds(1'700'000'060 + id);
    *t.mutable_final_measurement() = Loss(0.4 + 1e-6 * (id % 9973), 100);
  }
  return t;
}

bool Check(const absl::Status& s, const char* what) {
  if (s.ok()) return true;
  std::fprintf(stderr, "cairn_bench_restart_fill: %s: %s\n", what,
               s.ToString().c_str());
  return false;
}

// Writes one study's trials; the last `pending` are ACTIVE with measurements.
bool FillStudy(cairn::Store& store, int64_t study_id, int64_t trials,
               int64_t pending) {
  std::vector<Trial> batch;
  for (int64_t id = 1; id <= trials; ++id) {
    batch.push_back(MakeTrial(id, id > trials - pending));
    if (static_cast<int>(batch.size()) == kBatch || id == trials) {
      if (!Check(store.PutTrials(study_id, batch), "PutTrials")) return false;
      batch.clear();
    }
  }
  std::vector<cairn::Store::MeasurementWrite> ms;
  for (int64_t id = trials - pending + 1; id <= trials; ++id) {
    for (int step = 1; step <= 5; ++step) {
      ms.push_back({study_id, id, Loss(1.0 / step, step)});
    }
  }
  return Check(store.AppendMeasurements(ms), "AppendMeasurements");
}

// Marks the closed store at `path` as schema version 1 (before c/ records).
bool MarkVersion1(const std::string& path) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), path, &raw);
  if (s.ok()) {
    s = raw->Put(rocksdb::WriteOptions(), "meta/schema_version", "1");
    delete raw;
  }
  if (s.ok()) return true;
  std::fprintf(stderr, "cairn_bench_restart_fill: %s\n", s.ToString().c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t trials = 0;
  int64_t studies = 20;
  int64_t pending = 2;
  if (argc < 3 || !absl::SimpleAtoi(argv[2], &trials) || trials < 1 ||
      (argc > 3 && (!absl::SimpleAtoi(argv[3], &studies) || studies < 1)) ||
      (argc > 4 && (!absl::SimpleAtoi(argv[4], &pending) || pending < 0))) {
    std::fprintf(stderr,
                 "usage: cairn_bench_restart_fill DIR TRIALS [STUDIES=20] "
                 "[PENDING=2] (TRIALS, STUDIES >= 1, PENDING >= 0)\n");
    return 2;
  }
  cairn::StoreOptions options;
  options.sync = false;  // Filling only; the store is closed cleanly.
  auto store = cairn::Store::Open(options, argv[1]);
  if (!Check(store.status(), "opening the store")) return 1;
  const int64_t per_study = trials / studies;
  for (int64_t i = 0; i < studies; ++i) {
    auto id = (*store)->CreateStudy(BraninStudy(static_cast<int>(i)));
    if (!Check(id.status(), "CreateStudy")) return 1;
    const int64_t n = per_study + (i < trials % studies ? 1 : 0);
    if (!FillStudy(**store, *id, n, std::min(pending, n))) return 1;
  }
  store->reset();
  if (!MarkVersion1(argv[1])) return 1;
  std::printf("filled %s: %lld studies, %lld trials\n", argv[1],
              static_cast<long long>(studies), static_cast<long long>(trials));
  return 0;
}
