// The cairn study subcommands: create, list, get, delete, best, set-state,
// and stop (wait: study_wait.cc).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "cli/study_config.h"

namespace cairn::cli {
namespace {

using Stub = StudyClient::Stub;
namespace v1 = cairn::v1;

}  // namespace

absl::Status StudyCreate(Context& c) {
  auto spec = LoadStudySpecFile(c.opt.config);
  if (!spec.ok()) return spec.status();
  v1::CreateStudyRequest request;
  request.mutable_study()->set_display_name(
      c.opt.display_name.empty() ? DisplayNameFromPath(c.opt.config)
                                 : c.opt.display_name);
  *request.mutable_study()->mutable_spec() = *std::move(spec);
  auto study = c.Client().Call(&Stub::CreateStudy, request);
  if (!study.ok()) return study.status();
  *c.out << study->name() << "\n";
  return absl::OkStatus();
}

absl::Status StudyList(Context& c) {
  // Every page in one ListStudiesResponse (--json prints it).
  v1::ListStudiesResponse all;
  v1::ListStudiesRequest request;
  do {
    auto response = c.Client().Call(&Stub::ListStudies, request);
    if (!response.ok()) return response.status();
    all.mutable_studies()->MergeFrom(response->studies());
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  if (c.opt.json) return WriteJson(all, *c.out);
  *c.out << StudiesTable({all.studies().begin(), all.studies().end()});
  return absl::OkStatus();
}

absl::Status StudyGet(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  return WriteJson(*study, *c.out);
}

absl::Status StudyDelete(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::DeleteStudyRequest request;
  request.set_name(*name);
  auto response = c.Client().Call(&Stub::DeleteStudy, request);
  if (!response.ok()) return response.status();
  *c.out << "deleted " << *name << "\n";
  return absl::OkStatus();
}

absl::Status StudyBest(Context& c) {
  auto study = c.Client().ResolveStudy(c.opt.study);
  if (!study.ok()) return study.status();
  const api::formats::ParameterKinds kinds =
      api::formats::ParameterKindsOf(study->spec());
  v1::ListOptimalTrialsRequest request;
  request.set_parent(study->name());
  auto response = c.Client().Call(&Stub::ListOptimalTrials, request);
  if (!response.ok()) return response.status();
  if (c.opt.json) return WriteJson(*response, *c.out);
  if (response->optimal_trials_size() == 0) {
    *c.out << "no completed trials in " << study->name() << "\n";
    return absl::OkStatus();
  }
  bool first = true;
  for (const auto& t : response->optimal_trials()) {
    if (!first) *c.out << "\n";
    first = false;
    *c.out << TrialToText(t, kinds);
  }
  return absl::OkStatus();
}

absl::Status StudySetState(Context& c) {
  std::string upper = c.opt.state;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
  v1::Study::State state;
  if (!v1::Study::State_Parse(upper, &state) ||
      state == v1::Study::STATE_UNSPECIFIED || state == v1::Study::FAILED) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad study state \"", c.opt.state,
                     "\": expected active, inactive or completed"));
  }
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::SetStudyStateRequest request;
  request.set_name(*name);
  request.set_state(state);
  auto study = c.Client().Call(&Stub::SetStudyState, request);
  if (!study.ok()) return study.status();
  *c.out << study->name() << " " << v1::Study::State_Name(study->state())
         << "\n";
  return absl::OkStatus();
}

absl::Status StudyLabel(Context& c) {
  if (c.opt.label_pairs.empty() && c.opt.remove_labels.empty()) {
    return absl::InvalidArgumentError(
        "study label: give KEY=VALUE arguments or --remove KEY");
  }
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::UpdateStudyLabelsRequest request;
  request.set_name(*name);
  for (const std::string& kv : c.opt.label_pairs) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "study label: '", kv.substr(0, 64), "' is not KEY=VALUE"));
    }
    (*request.mutable_labels())[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const std::string& key : c.opt.remove_labels) {
    request.add_remove_keys(key);
  }
  auto study = c.Client().Call(&Stub::UpdateStudyLabels, request);
  if (!study.ok()) return study.status();
  std::map<std::string, std::string> sorted(study->spec().labels().begin(),
                                            study->spec().labels().end());
  *c.out << study->name() << " labels:";
  for (const auto& [key, value] : sorted) *c.out << " " << key << "=" << value;
  *c.out << "\n";
  return absl::OkStatus();
}

// Stops a study: no new trials, and cairnd cancels its running jobs.
absl::Status StudyStop(Context& c) {
  auto name = c.Client().ResolveStudyName(c.opt.study);
  if (!name.ok()) return name.status();
  v1::SetStudyStateRequest request;
  request.set_name(*name);
  request.set_state(v1::Study::INACTIVE);
  auto study = c.Client().Call(&Stub::SetStudyState, request);
  if (!study.ok()) return study.status();
  if (study->state() != v1::Study::INACTIVE) {
    // Finished: cairnd still stops jobs that run after their trial ended.
    auto trials = c.Client().ListAllTrials(study->name());
    if (!trials.ok()) return trials.status();
    int stopping = 0;
    for (const v1::Trial& t : trials->trials()) {
      stopping += t.job().state() == v1::TrialJob::STOPPING ? 1 : 0;
    }
    *c.out << study->name() << " is already "
           << v1::Study::State_Name(study->state());
    if (stopping == 0) {
      *c.out << "; nothing to stop\n";
    } else {
      *c.out << "; " << stopping << " job(s) still running are being stopped\n";
    }
    return absl::OkStatus();
  }
  *c.out << study->name() << " stopped (INACTIVE); its running jobs are "
         << "cancelled. Resume with: cairn study set-state " << study->name()
         << " active\n";
  return absl::OkStatus();
}

}  // namespace cairn::cli
