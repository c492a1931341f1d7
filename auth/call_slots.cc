// See call_slots.h.
#include "auth/call_slots.h"

#include "absl/strings/str_cat.h"

namespace cairn::auth {

absl::Status CallSlots::Acquire(const void* call,
                                const std::string& principal) {
  absl::MutexLock lock(&mu_);
  if (holder_.contains(call)) return absl::OkStatus();
  int& n = count_[principal];
  if (n >= max_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("'", principal, "' already has ", n,
                     " calls in progress, the most one token may (cairnd "
                     "--max-calls-per-token); retry when some have ended"));
  }
  ++n;
  holder_.emplace(call, principal);
  return absl::OkStatus();
}

void CallSlots::Release(const void* call) {
  absl::MutexLock lock(&mu_);
  auto it = holder_.find(call);
  if (it == holder_.end()) return;
  auto count = count_.find(it->second);
  if (--count->second == 0) count_.erase(count);
  holder_.erase(it);
}

int CallSlots::InProgress(const std::string& principal) const {
  absl::MutexLock lock(&mu_);
  auto it = count_.find(principal);
  return it == count_.end() ? 0 : it->second;
}

}  // namespace cairn::auth
