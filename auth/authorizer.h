// Authorizer: the one check every RPC goes through. Given the call's
// `authorization` metadata, its full method name and the resource it acts
// on, returns the calling Principal or the error to send:
//   - Unauthenticated: no or malformed metadata, unknown, expired or
//     revoked token;
//   - PermissionDenied naming the permission: a known token whose role is
//     too low, a job token outside its trial, or a method not in the
//     permission table (fail closed).
// With auth disabled (--auth=none) every call is Principal{"local", admin}.
//
// Thread-safe.
#ifndef CAIRN_AUTH_AUTHORIZER_H_
#define CAIRN_AUTH_AUTHORIZER_H_

#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "auth/call_slots.h"
#include "auth/token_registry.h"

namespace cairn::auth {

class Authorizer {
 public:
  // `registry` is not owned and must outlive the Authorizer; nullptr
  // disables authentication. `now` gives the current time (tests).
  explicit Authorizer(TokenRegistry* registry,
                      std::function<absl::Time()> now = absl::Now)
      : registry_(registry), now_(std::move(now)) {}

  // `authorization`: the metadata value ("Bearer <token>"), empty if absent.
  // `resource`: the trial name the call acts on, for job tokens; may be
  // empty for methods no job token may call.
  absl::StatusOr<Principal> Authorize(absl::string_view authorization,
                                      absl::string_view full_method,
                                      absl::string_view resource) const;

  // As Authorize, for a stream whose messages each name the trial they act
  // on (ReportMeasurements), checked before the first one is read: a job
  // token's trial is then the caller's to check per message
  // (Principal::trial).
  absl::StatusOr<Principal> AuthorizeStream(
      absl::string_view authorization, absl::string_view full_method) const;

  // Who `authorization` ("Bearer <token>") names, for the audit log: the
  // principal of a token the registry knows (also a revoked or expired
  // one; see TokenRegistry::Identify), nullopt for none, a malformed or an
  // unknown one. With auth disabled: Principal{kLocalPrincipal, admin}.
  std::optional<Principal> Identify(absl::string_view authorization) const;

  bool enabled() const { return registry_ != nullptr; }

  // The bound on calls in progress per principal that callers of Authorize
  // apply (server/authorize_call.h); nullptr (the default): none. Not
  // owned; set before serving.
  void set_call_slots(CallSlots* slots) { call_slots_ = slots; }
  CallSlots* call_slots() const { return call_slots_; }

 private:
  // Authorize; `resource` nullptr for AuthorizeStream.
  absl::StatusOr<Principal> Check(absl::string_view authorization,
                                  absl::string_view full_method,
                                  const absl::string_view* resource) const;

  TokenRegistry* const registry_;
  const std::function<absl::Time()> now_;
  CallSlots* call_slots_ = nullptr;
};

// OK if `caller` may delete `what` (a study, or a trial of it) of a study
// that `creator` created: an admin always, anyone else only their own.
// PermissionDenied naming the permission (admin) and the creator otherwise.
absl::Status CheckMayDelete(const Principal& caller, absl::string_view what,
                            absl::string_view creator);

// The name a principal acting without authentication (--auth=none) has.
inline constexpr absl::string_view kLocalPrincipal = "local";

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_AUTHORIZER_H_
