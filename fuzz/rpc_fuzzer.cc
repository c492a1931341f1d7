// Feeds a sequence of cairn.v1 StudyService requests to a StudyManager on a
// RocksDB store, the way server/study_service.cc calls it. The input is
// records [method byte][length byte][serialized request]; a request that does
// not parse is skipped. An empty study or trial name stands for the last study
// created / trial returned in this input, so sequences reach real trials.
// Checks that no request crashes or trips a sanitizer, whatever it returns.
// The store (in a temp dir created once) is replaced by a fresh one every
// 1000 inputs to keep the number of studies bounded.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cairn/v1/study_service.pb.h"
#include "store/store.h"
#include "trials/study_manager.h"

namespace {

using cairn::StudyManager;

struct World {
  std::string root;
  int generation = 0;
  int inputs = 0;
  std::unique_ptr<cairn::Store> store;
  std::unique_ptr<StudyManager> manager;
};

World* TheWorld() {
  static World* world = new World;
  return world;
}

// Opens a fresh store and manager in a new subdirectory of the root.
void Reopen(World* w) {
  w->manager.reset();
  w->store.reset();
  if (w->generation > 0) {
    std::filesystem::remove_all(
        absl::StrCat(w->root, "/db", w->generation - 1));
  }
  const std::string dir = absl::StrCat(w->root, "/db", w->generation++);
  cairn::StoreOptions options;
  options.sync = false;  // Durability is not what is fuzzed here.
  auto store = cairn::Store::Open(options, dir);
  if (!store.ok()) abort();
  w->store = std::move(*store);
  auto manager =
      StudyManager::Open(w->store.get(), cairn::StudyManagerOptions());
  if (!manager.ok()) abort();
  w->manager = std::move(*manager);
  w->inputs = 0;
}

// Names filled in for empty name fields.
struct Names {
  std::string study;
  std::string trial;
  std::string Study(const std::string& s) const {
    return s.empty() ? study : s;
  }
  std::string Trial(const std::string& s) const {
    return s.empty() ? trial : s;
  }
  void Saw(const absl::StatusOr<cairn::v1::Trial>& t) {
    if (t.ok()) trial = t->name();
  }
};

template <typename Request>
bool Parse(const uint8_t* data, size_t size, Request* request) {
  return request->ParseFromArray(data, static_cast<int>(size));
}

void Apply(StudyManager& m, uint8_t method, const uint8_t* data, size_t size,
           Names& names) {
  switch (method % 16) {
    case 0: {
      cairn::v1::CreateStudyRequest r;
      if (!Parse(data, size, &r)) return;
      // A display name taken by an earlier input: go on with that study, so
      // a seed keeps reaching trials after its first run.
      auto s = m.CreateStudy(r.study());
      if (absl::IsAlreadyExists(s.status())) {
        s = m.LookupStudy(r.study().display_name());
      }
      if (s.ok()) names.study = s->name();
      return;
    }
    case 1: {
      cairn::v1::SuggestTrialsRequest r;
      if (!Parse(data, size, &r)) return;
      const int count = r.suggestion_count() == 0 ? 1 : r.suggestion_count();
      auto res = m.SuggestTrials(names.Study(r.parent()), count, r.client_id());
      if (res.ok() && !res->trials.empty()) names.trial = res->trials[0].name();
      return;
    }
    case 2: {
      cairn::v1::AddTrialMeasurementRequest r;
      if (!Parse(data, size, &r)) return;
      names.Saw(m.AddMeasurement(names.Trial(r.trial_name()), r.measurement()));
      return;
    }
    case 3: {
      cairn::v1::CompleteTrialRequest r;
      if (!Parse(data, size, &r)) return;
      std::optional<cairn::v1::Measurement> final_measurement;
      if (r.has_final_measurement()) final_measurement = r.final_measurement();
      names.Saw(m.CompleteTrial(names.Trial(r.name()), final_measurement,
                                r.trial_infeasible(), r.infeasible_reason()));
      return;
    }
    case 4: {
      cairn::v1::ListTrialsRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.ListTrials(names.Study(r.parent()), r.page_size(), r.page_token(),
                         r.include_measurements());
      return;
    }
    case 5: {
      cairn::v1::CreateTrialRequest r;
      if (!Parse(data, size, &r)) return;
      names.Saw(m.CreateTrial(names.Study(r.parent()), r.trial()));
      return;
    }
    case 6: {
      cairn::v1::GetTrialRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.GetTrial(names.Trial(r.name()));
      return;
    }
    case 7: {
      cairn::v1::DeleteTrialRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.DeleteTrial(names.Trial(r.name()));
      return;
    }
    case 8: {
      cairn::v1::StopTrialRequest r;
      if (!Parse(data, size, &r)) return;
      names.Saw(m.StopTrial(names.Trial(r.name())));
      return;
    }
    case 9: {
      cairn::v1::CheckTrialEarlyStoppingStateRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.CheckEarlyStopping(names.Trial(r.trial_name()));
      return;
    }
    case 10: {
      cairn::v1::ListOptimalTrialsRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.ListOptimalTrials(names.Study(r.parent()));
      return;
    }
    case 11: {
      // As the service does: one point per measurement, from metrics(0).
      cairn::v1::GetMetricHistoryRequest r;
      if (!Parse(data, size, &r)) return;
      cairn::MetricHistoryQuery q;
      q.metric_id = r.metric_id();
      q.page_size = r.page_size();
      q.page_token = r.page_token();
      if (r.has_start_step()) q.start_step = r.start_step().value();
      if (r.has_end_step()) q.end_step = r.end_step().value();
      q.max_points = r.max_points();
      auto history = m.GetMetricHistory(names.Trial(r.trial_name()), q);
      if (!history.ok()) return;
      if (q.max_points > 0 &&
          history->points.size() > static_cast<size_t>(q.max_points)) {
        abort();
      }
      for (const cairn::v1::Measurement& h : history->points) {
        if (h.metrics_size() == 0) abort();
      }
      return;
    }
    case 12: {
      cairn::v1::SetStudyStateRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.SetStudyState(names.Study(r.name()), r.state());
      return;
    }
    case 13: {
      cairn::v1::ListStudiesRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.ListStudies(r.page_size(), r.page_token());
      return;
    }
    case 14: {
      cairn::v1::LookupStudyRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.LookupStudy(r.display_name());
      (void)m.GetStudy(names.study);
      return;
    }
    default: {
      cairn::v1::DeleteStudyRequest r;
      if (!Parse(data, size, &r)) return;
      (void)m.DeleteStudy(names.Study(r.name()));
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/cairn_fuzz_rpc.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) abort();
  TheWorld()->root = tmpl;
  Reopen(TheWorld());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World* w = TheWorld();
  if (++w->inputs > 1000) Reopen(w);
  Names names;
  size_t pos = 0;
  while (pos + 2 <= size) {
    const uint8_t method = data[pos];
    const size_t len = std::min<size_t>(data[pos + 1], size - pos - 2);
    Apply(*w->manager, method, data + pos + 2, len, names);
    pos += 2 + len;
  }
  return 0;
}
