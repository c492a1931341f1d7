// Study controller: opening and recovery, the failed state, and studies. See
// study_manager.h for the contract; trials, measurements and job hooks live
// in study_manager_{trials,measurements,jobs}.cc.
#include "trials/study_manager.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/request_limits.h"
#include "api/resource_names.h"
#include "api/study_defaults.h"
#include "api/trial_states.h"
#include "spdlog/spdlog.h"
#include "trials/study_loading.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"
#include "trials/suggest_pool.h"
#include "tuner/designer.h"
#include "tuner/spec_validation.h"
#include "util/quote.h"
#include "util/time_proto.h"

namespace cairn {

using cairn::v1::Measurement;
using cairn::v1::Study;
using cairn::v1::StudySpec;
using cairn::v1::Trial;
using study_manager_internal::CheckPageSize;
using study_manager_internal::Finish;
using study_manager_internal::ParsePageToken;
using study_manager_internal::WriteTimer;

StudyManager::StudyManager(StudyDataStore* store,
                           const StudyManagerOptions& options)
    : store_(store),
      clock_(options.clock != nullptr ? options.clock : util::Clock::Real()),
      observer_(options.observer),
      validate_spec_(options.validate_spec),
      create_designer_(
          options.create_designer
              ? options.create_designer
              : [](const cairn::v1::StudySpec&
                       spec) { return tuner::CreateDesigner(spec); }),
      min_free_bytes_(options.min_free_bytes),
      suggest_queue_deadline_(
          options.gp_queue_deadline_seconds > 0
              ? absl::Seconds(options.gp_queue_deadline_seconds)
              : absl::InfiniteDuration()) {
  if (options.gp_workers > 0) {
    SuggestPoolOptions pool;
    pool.workers = options.gp_workers;
    suggest_pool_ = std::make_unique<SuggestPool>(
        pool, [this](int64_t study_id, const std::vector<SuggestAsk*>& asks) {
          AnswerPooledAsks(study_id, asks);
        });
  }
}

StudyManager::~StudyManager() = default;

absl::Status StudyManager::CheckWritable() {
  absl::Status health = store_->WriteHealth();
  if (health.ok()) return health;
  absl::MutexLock lock(&recovery_mu_);
  health = store_->WriteHealth();
  if (health.ok()) return health;
  if (!ReloadOnce()) return health;
  const absl::Time now = clock_->Now();
  if (now - last_resume_ < absl::Seconds(1)) return health;
  last_resume_ = now;
  if (absl::Status s = store_->Resume(); !s.ok()) return s;
  reloaded_ = false;
  spdlog::info("store writable again: writes are accepted");
  return absl::OkStatus();
}

absl::Status StudyManager::CheckReserve() const {
  if (min_free_bytes_ == 0) return absl::OkStatus();
  absl::StatusOr<uint64_t> free = store_->AvailableBytes();
  if (!free.ok() || *free >= min_free_bytes_) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the store's disk has ", *free >> 20, " MB free, below the reserve of ",
      min_free_bytes_ >> 20,
      " MB (--min-free-space): new studies and trials are refused until "
      "space is freed; running trials can still report"));
}

void StudyManager::RecoverFromFailedWrite() {
  absl::MutexLock lock(&recovery_mu_);
  const absl::Status health = store_->WriteHealth();
  if (reloaded_ || health.ok()) return;
  spdlog::error("{}", std::string(health.message()));
  ReloadOnce();
}

bool StudyManager::ReloadOnce() {
  if (!reloaded_) reloaded_ = ReloadFromStore().ok();
  return reloaded_;
}

absl::Status StudyManager::ReloadFromStore() {
  absl::StatusOr<std::vector<StoredStudy>> loaded = store_->LoadStudies();
  if (!loaded.ok()) return loaded.status();
  std::map<int64_t, std::shared_ptr<StudyState>> fresh;
  for (StoredStudy& stored : *loaded) {
    absl::StatusOr<std::shared_ptr<StudyState>> state =
        StudyFromStore(store_, std::move(stored), create_designer_);
    if (!state.ok()) return state.status();
    fresh[(*state)->id] = std::move(*state);
  }
  absl::MutexLock lock(&mu_);
  // Keep the objects callers may hold; a study gone from the store (never
  // the case today: studies are created and deleted synchronously) is
  // marked deleted.
  for (auto& [id, old] : studies_) {
    absl::MutexLock old_lock(&old->mu);
    auto it = fresh.find(id);
    if (it == fresh.end()) {
      old->deleted = true;
      continue;
    }
    {
      // Not it->second itself: the assignment below frees the fresh state,
      // which must outlive this lock.
      StudyState& recovered = *it->second;
      absl::MutexLock fresh_lock(&recovered.mu);
      // A loaded study stays loaded (callers may rely on it): read its
      // trials again now.
      if (old->loaded) {
        if (absl::Status s = EnsureLoaded(store_, recovered); !s.ok()) {
          return s;
        }
      }
      old->ReplaceContents(recovered);
    }
    it->second = old;
  }
  by_display_name_.clear();
  for (const auto& [id, st] : fresh) {
    absl::MutexLock study_lock(&st->mu);
    by_display_name_[st->study.display_name()] = id;
  }
  studies_ = std::move(fresh);
  return absl::OkStatus();
}

absl::Status StudyManager::AwaitWrites(
    const std::vector<std::shared_ptr<PendingWrite>>& writes, bool timed) {
  absl::Status status;
  {
    std::optional<WriteTimer> timer;
    if (timed) timer.emplace(observer_);
    for (const auto& w : writes) {
      status = store_->Await(w);
      if (!status.ok()) break;
    }
  }
  if (!status.ok()) RecoverFromFailedWrite();
  return status;
}

absl::Status StudyManager::AwaitScope(const WriteScope& scope) {
  return AwaitWrites(scope.pending, scope.wrote);
}

absl::Status StudyManager::AwaitAndReport(std::string_view call,
                                          const WriteScope& scope,
                                          bool designs) {
  double sync = 0;
  absl::Status status = Timed(&sync, [&] { return AwaitScope(scope); });
  if (observer_ != nullptr) {
    observer_->OnCallPhase(call, call_phase::kStudyLock, scope.times.lock_wait);
    if (designs) {
      observer_->OnCallPhase(call, call_phase::kDesigner, scope.times.designer);
    }
    observer_->OnCallPhase(call, call_phase::kAppend, scope.times.append);
    observer_->OnCallPhase(call, call_phase::kSync, sync);
  }
  return status;
}

namespace {

// Writes the summary record of a study recovered without one (a store
// written before the records existed) and unloads it again.
absl::Status WriteMissingSummary(StudyDataStore* store, StudyState& st)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (absl::Status s = store->PutSummary(st.id, st.summary); !s.ok()) {
    return s;
  }
  st.Unload();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<StudyManager>> StudyManager::Open(
    StudyDataStore* store, const StudyManagerOptions& options) {
  std::unique_ptr<StudyManager> manager(new StudyManager(store, options));
  absl::StatusOr<std::vector<StoredStudy>> loaded = store->LoadStudies();
  if (!loaded.ok()) return loaded.status();
  int64_t built = 0;
  absl::MutexLock lock(&manager->mu_);
  for (StoredStudy& stored : *loaded) {
    absl::StatusOr<std::shared_ptr<StudyState>> state =
        StudyFromStore(store, std::move(stored), manager->create_designer_);
    if (!state.ok()) return state.status();
    std::shared_ptr<StudyState> st = std::move(*state);
    {
      absl::MutexLock study_lock(&st->mu);
      if (st->loaded) {
        if (absl::Status s = WriteMissingSummary(store, *st); !s.ok()) return s;
        ++built;
      }
      manager->by_display_name_[st->study.display_name()] = st->id;
    }
    manager->studies_[st->id] = std::move(st);
  }
  if (absl::Status s = store->MarkSummariesComplete(); !s.ok()) return s;
  if (built > 0) {
    spdlog::info(
        "wrote the trial summary records of {} studies (once, for a "
        "store from before they existed)",
        built);
  }
  return manager;
}

absl::StatusOr<std::shared_ptr<StudyState>> StudyManager::FindStudy(
    int64_t study_id) const {
  absl::StatusOr<std::shared_ptr<StudyState>> found = PeekStudy(study_id);
  if (!found.ok()) return found;
  StudyState& st = **found;
  absl::MutexLock lock(&st.mu);
  if (absl::Status s = EnsureLoaded(store_, st); !s.ok()) return s;
  return found;
}

absl::StatusOr<std::shared_ptr<StudyState>> StudyManager::PeekStudy(
    int64_t study_id) const {
  absl::MutexLock lock(&mu_);
  auto it = studies_.find(study_id);
  if (it == studies_.end()) {
    return absl::NotFoundError(
        absl::StrCat("study ", api::StudyName(study_id), " not found"));
  }
  return it->second;
}

std::vector<std::shared_ptr<StudyState>> StudyManager::AllStudies() const {
  std::vector<std::shared_ptr<StudyState>> states;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, s] : studies_) states.push_back(s);
  return states;
}

absl::StatusOr<std::shared_ptr<StudyState>> StudyManager::FindStudyByName(
    const std::string& name, const char* field) const {
  absl::StatusOr<int64_t> id = api::ParseStudyName(name, field);
  if (!id.ok()) return id.status();
  return FindStudy(*id);
}

absl::StatusOr<std::shared_ptr<StudyState>> StudyManager::PeekStudyByName(
    const std::string& name, const char* field) const {
  absl::StatusOr<int64_t> id = api::ParseStudyName(name, field);
  if (!id.ok()) return id.status();
  return PeekStudy(*id);
}

absl::StatusOr<StudyManager::TrialRef> StudyManager::ResolveTrial(
    const std::string& name, const char* field) const {
  absl::StatusOr<api::TrialName> tn = api::ParseTrialName(name, field);
  if (!tn.ok()) return tn.status();
  auto state = FindStudy(tn->study_id);
  if (!state.ok()) return state.status();
  return TrialRef{std::move(*state), tn->trial_id};
}

// ---------------------------------------------------------------- studies

absl::Status StudyManager::ValidateNewStudy(const Study& request) const {
  if (request.display_name().empty()) {
    return absl::InvalidArgumentError("study.display_name: must not be empty");
  }
  // Lengths, characters, counts and nesting (api/limits.h), also
  // for callers in the same process: before the spec's own validation, which
  // recurses into conditional parameters.
  if (absl::Status s = api::CheckRequestLimits(request, "study"); !s.ok()) {
    return s;
  }
  if (absl::Status s = tuner::ValidateStudySpec(request.spec()); !s.ok()) {
    return s;
  }
  if (validate_spec_) return validate_spec_(request.spec());
  return absl::OkStatus();
}

namespace {

// The study record CreateStudy writes for `request` (validated), created
// at `now`.
Study NewStudyRecord(const Study& request, absl::Time now) {
  Study study;
  study.set_display_name(request.display_name());
  *study.mutable_spec() = request.spec();
  if (request.state() == Study::INACTIVE) {  // Created paused.
    study.set_state(Study::INACTIVE);
    study.set_inactive_reason(request.inactive_reason().empty()
                                  ? "created inactive"
                                  : request.inactive_reason());
  } else {
    study.set_state(Study::ACTIVE);
  }
  *study.mutable_create_time() = util::ToProtoTimestamp(now);
  study.set_creator(request.creator());
  return study;
}

}  // namespace

absl::Status StudyManager::ReserveDisplayName(const std::string& display_name) {
  absl::MutexLock lock(&mu_);
  if (by_display_name_.count(display_name) > 0 ||
      !creating_.insert(display_name).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("study.display_name: a study named ",
                     util::QuoteForError(display_name), " already exists"));
  }
  return absl::OkStatus();
}

Study StudyManager::AddCreatedStudy(int64_t study_id, const Study& study,
                                    std::unique_ptr<tuner::Designer> designer) {
  auto state = std::make_shared<StudyState>(study_id);
  {
    absl::MutexLock study_lock(&state->mu);
    state->study = study;
    state->study.set_name(api::StudyName(study_id));
    state->loaded = true;
    state->designer = std::move(designer);
  }
  absl::MutexLock lock(&mu_);
  creating_.erase(study.display_name());
  // A rebuild from the store after another call's failed write may have
  // added the study meanwhile: keep that object, which callers may hold.
  StudyState& added =
      *studies_.try_emplace(study_id, std::move(state)).first->second;
  by_display_name_[study.display_name()] = study_id;
  absl::MutexLock study_lock(&added.mu);
  return added.View();
}

absl::StatusOr<Study> StudyManager::CreateStudy(const Study& request) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  if (absl::Status s = CheckReserve(); !s.ok()) return s;
  if (absl::Status s = ValidateNewStudy(request); !s.ok()) return s;
  Study resolved = request;  // Stored with what runs: algorithm and seed.
  api::ApplyStudyDefaults(api::NewRandomSeed(), *resolved.mutable_spec());
  absl::StatusOr<std::unique_ptr<tuner::Designer>> designer =
      create_designer_(resolved.spec());
  if (!designer.ok()) return designer.status();
  const Study study = NewStudyRecord(resolved, clock_->Now());
  if (absl::Status s = ReserveDisplayName(study.display_name()); !s.ok()) {
    return s;
  }
  absl::StatusOr<int64_t> id;
  {
    WriteTimer timer(observer_);
    id = store_->CreateStudy(study);
  }
  if (!id.ok()) {
    absl::MutexLock lock(&mu_);
    creating_.erase(study.display_name());
    return id.status();
  }
  return AddCreatedStudy(*id, study, std::move(*designer));
}

absl::StatusOr<Study> StudyManager::GetStudy(const std::string& name) {
  auto state = PeekStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  Study view;
  {
    LockedStudy lock(st, &scope);
    // Deleted while this call waited for the deletion's outcome.
    if (st.deleted) {
      return absl::NotFoundError(absl::StrCat("study ", name, " not found"));
    }
    view = st.View();
  }
  return Finish<absl::StatusOr<Study>>(AwaitScope(scope), std::move(view));
}

absl::StatusOr<Study> StudyManager::LookupStudy(
    const std::string& display_name) {
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_display_name_.find(display_name);
    if (it == by_display_name_.end()) {
      return absl::NotFoundError(absl::StrCat(
          "no study with display_name ", util::QuoteForError(display_name)));
    }
    id = it->second;
  }
  return GetStudy(api::StudyName(id));
}

absl::StatusOr<StudyPage> StudyManager::ListStudies(
    int page_size, const std::string& page_token) {
  if (absl::Status s = CheckPageSize(page_size); !s.ok()) return s;
  if (page_size == 0) page_size = 100;
  absl::StatusOr<int64_t> after = ParsePageToken(page_token);
  if (!after.ok()) return after.status();
  std::vector<std::shared_ptr<StudyState>> states;
  bool more = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = studies_.upper_bound(*after); it != studies_.end(); ++it) {
      if (static_cast<int>(states.size()) == page_size) {
        more = true;
        break;
      }
      states.push_back(it->second);
    }
  }
  StudyPage page;
  WriteScope scope;
  for (const auto& state : states) {
    LockedStudy lock(*state, &scope);
    if (!state->deleted) page.studies.push_back(state->View());
  }
  if (more && !states.empty()) {
    page.next_page_token = absl::StrCat(states.back()->id);
  }
  return Finish<absl::StatusOr<StudyPage>>(AwaitScope(scope), std::move(page));
}

absl::Status StudyManager::BeginDeletion(StudyState& st,
                                         const std::string& name) {
  absl::MutexLock lock(&st.mu);
  st.AwaitNoDeletion();
  if (st.deleted) {
    return absl::NotFoundError(absl::StrCat("study ", name, " not found"));
  }
  st.deleting = true;
  return absl::OkStatus();
}

absl::Status StudyManager::EndDeletion(StudyState& st, absl::Status written) {
  std::string display_name;
  {
    // Not under mu_: a call waiting for the outcome may hold another
    // study's mutex, which a holder of mu_ (a rebuild) may be waiting for.
    absl::MutexLock study_lock(&st.mu);
    st.deleting = false;
    if (!written.ok()) return written;
    st.deleted = true;
    display_name = st.study.display_name();
  }
  absl::MutexLock lock(&mu_);
  // A rebuild meanwhile may have given the name to a newer study.
  auto named = by_display_name_.find(display_name);
  if (named != by_display_name_.end() && named->second == st.id) {
    by_display_name_.erase(named);
  }
  studies_.erase(st.id);
  return written;
}

absl::Status StudyManager::DeleteStudy(const std::string& name) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  auto state = PeekStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  if (absl::Status s = BeginDeletion(st, name); !s.ok()) return s;
  absl::Status written;
  {
    WriteTimer timer(observer_);
    written = store_->DeleteStudy(st.id);
  }
  return EndDeletion(st, std::move(written));
}

namespace {

// Asks the job runner to end every job of `st` that runs after its trial
// ended (a finished study has no pending trial).
absl::Status StopLiveJobs(StudyState& st, StudyDataStore* store,
                          WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  if (absl::Status s = EnsureLoaded(store, st); !s.ok()) return s;
  std::vector<Trial> live;
  for (const auto& [id, t] : st.trials) {
    if (!api::IsPendingState(t.state()) && api::HasLiveJob(t)) {
      live.push_back(t);
    }
  }
  for (const Trial& t : live) {
    if (absl::Status s = st.StopLiveJob(
            store, t, "stop requested after the study ended", scope);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// SetStudyState under the study's lock.
absl::StatusOr<Study> SetStateLocked(StudyState& st, const std::string& name,
                                     Study::State new_state,
                                     StudyDataStore* store, WriteScope* scope)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu) {
  // Stopping a finished study keeps its outcome; jobs still running end.
  if (new_state == Study::INACTIVE && (st.study.state() == Study::COMPLETED ||
                                       st.study.state() == Study::FAILED)) {
    if (absl::Status s = StopLiveJobs(st, store, scope); !s.ok()) return s;
    return st.View();
  }
  const StudySpec& spec = st.study.spec();
  if (new_state == Study::ACTIVE && spec.max_trials() > 0 &&
      st.summary.total() >= spec.max_trials()) {
    return absl::FailedPreconditionError(
        absl::StrCat("study ", name, " cannot be reactivated: max_trials (",
                     spec.max_trials(), ") already reached"));
  }
  Study updated = st.study;
  updated.set_state(new_state);
  updated.set_inactive_reason(new_state == Study::ACTIVE ? ""
                                                         : "set by a user");
  if (absl::Status s = Queued(store->EnqueueUpdateStudy(st.id, updated),
                              &st.last_write, scope);
      !s.ok()) {
    return s;
  }
  st.study = std::move(updated);
  if (new_state == Study::ACTIVE) st.exhausted = false;
  return st.View();
}

}  // namespace

absl::StatusOr<Study> StudyManager::SetStudyState(const std::string& name,
                                                  Study::State new_state) {
  if (new_state != Study::ACTIVE && new_state != Study::INACTIVE &&
      new_state != Study::COMPLETED) {
    return absl::InvalidArgumentError(
        absl::StrCat("state: ", Study::State_Name(new_state),
                     " cannot be set; use ACTIVE, INACTIVE or COMPLETED"));
  }
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  // The study record and counts suffice: its trials are not loaded.
  auto state = PeekStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<Study> result;
  {
    LockedStudy lock(st, &scope);
    result = SetStateLocked(st, name, new_state, store_, &scope);
  }
  return Finish(AwaitScope(scope), std::move(result));
}

// ---------------------------------------------------------------- monitoring

int64_t StudyManager::num_studies() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(studies_.size());
}

int64_t StudyManager::num_trials() const {
  int64_t n = 0;
  for (const auto& s : AllStudies()) {
    absl::MutexLock lock(&s->mu);
    n += s->summary.total();
  }
  return n;
}

std::vector<StudySummary> StudyManager::Summaries() const {
  std::vector<StudySummary> out;
  for (const auto& s : AllStudies()) {
    absl::MutexLock lock(&s->mu);
    if (s->deleted) continue;
    if (s->loaded) {
      out.push_back(SummarizeStudy(s->View(), s->trials, s->last_measurement));
    } else {
      out.push_back(SummarizeUnloaded(s->View(), s->summary));
    }
  }
  return out;
}

}  // namespace cairn
