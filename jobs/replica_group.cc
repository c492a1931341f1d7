// A trial attempt's replica processes. See replica_group.h.
#include "jobs/replica_group.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace cairn::jobs {

std::string GroupExit::ToString() const {
  if (by_master) return exit.ToString();
  return absl::StrCat(replica, " ", exit.ToString());
}

absl::StatusOr<ReplicaGroup> ReplicaGroup::Start(
    Executor* executor, const std::vector<std::string>& names,
    const std::vector<JobSpec>& specs, absl::Duration grace) {
  if (specs.empty() || names.size() != specs.size()) {
    return absl::InvalidArgumentError(
        "replicas: need one name per spec and at least a master");
  }
  ReplicaGroup group(executor, grace);
  if (specs.size() > 1 && executor->StartsGroups()) {
    absl::StatusOr<JobHandle> handle = executor->StartGroup(names, specs);
    if (!handle.ok()) return handle.status();
    group.processes_.push_back({names[0], *handle, std::nullopt});
    return group;
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::StatusOr<JobHandle> handle = executor->Start(specs[i]);
    if (!handle.ok()) {
      // Nothing of a half-started group may linger.
      group.Terminate(absl::ZeroDuration());
      while (!group.processes_.empty() && !group.Poll().has_value()) {
        absl::SleepFor(absl::Milliseconds(5));
      }
      if (specs.size() == 1) return handle.status();
      return absl::Status(
          handle.status().code(),
          absl::StrCat(names[i], ": ", handle.status().message()));
    }
    group.processes_.push_back({names[i], *handle, std::nullopt});
  }
  return group;
}

ReplicaGroup ReplicaGroup::Adopt(Executor* executor, const std::string& name,
                                 const JobHandle& handle,
                                 absl::Duration grace) {
  ReplicaGroup group(executor, grace);
  group.processes_.push_back({name, handle, std::nullopt});
  return group;
}

std::optional<GroupExit> ReplicaGroup::Poll() {
  bool all_ended = true;
  for (size_t i = 0; i < processes_.size(); ++i) {
    RunningReplica& p = processes_[i];
    if (!p.exit.has_value()) p.exit = executor_->Poll(p.handle);
    if (!p.exit.has_value()) {
      all_ended = false;
      continue;
    }
    const bool master = i == 0;
    if (outcome_.has_value()) continue;
    if (master) {
      outcome_ = GroupExit{*p.exit, p.name, p.handle.pid, true};
    } else if (!p.exit->ok() && !stopping_) {
      outcome_ = GroupExit{*p.exit, p.name, p.handle.pid, false};
    }
  }
  if (outcome_.has_value()) StopOthers();
  if (!all_ended) return std::nullopt;
  if (!outcome_.has_value()) {
    // Stopped by Terminate() and the master's exit was seen last time.
    const RunningReplica& m = processes_[0];
    outcome_ =
        GroupExit{m.exit.value_or(JobExit{}), m.name, m.handle.pid, true};
  }
  return outcome_;
}

void ReplicaGroup::Terminate(absl::Duration grace) {
  grace_ = grace;
  StopOthers();
}

void ReplicaGroup::StopOthers() {
  if (stopping_) return;
  stopping_ = true;
  for (RunningReplica& p : processes_) {
    if (!p.exit.has_value()) executor_->Terminate(p.handle, grace_);
  }
}

}  // namespace cairn::jobs
