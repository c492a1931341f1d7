// TokenRegistry: cairnd's tokens. Named tokens (with a role and an optional
// expiry) live in the store as cairn.v1.TokenRecord (the SHA-256 of the
// secret, never the secret) and in memory, indexed by hash; training-job
// tokens (scoped to one trial) live in memory only and end with cairnd.
//
// Thread-safe.
#ifndef CAIRN_AUTH_TOKEN_REGISTRY_H_
#define CAIRN_AUTH_TOKEN_REGISTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cairn/v1/admin_service.pb.h"
#include "store/store.h"

namespace cairn::auth {

// Who is calling.
struct Principal {
  std::string name;  // The token's name ("job:<trial>" for a job's token).
  cairn::v1::Role role = cairn::v1::ROLE_UNSPECIFIED;
  // Non-empty for a training job's token: the one trial it may act on.
  std::string trial;
};

// A new token: its facts and its secret (shown once).
struct CreatedToken {
  cairn::v1::Token token;
  std::string secret;
};

class TokenRegistry {
 public:
  // Loads every token record of `store` (not owned; must outlive the
  // registry). Errors: the store's.
  static absl::StatusOr<std::unique_ptr<TokenRegistry>> Open(TokenStore* store);

  // Creates and stores a token. ttl <= 0: never expires. InvalidArgument for
  // a bad name or role, AlreadyExists if the name is taken (revoked tokens
  // keep their names).
  absl::StatusOr<CreatedToken> Create(const std::string& name,
                                      cairn::v1::Role role, absl::Duration ttl,
                                      absl::Time now);

  // Every named token, by name.
  std::vector<cairn::v1::Token> List() const;

  // Revokes a token durably; it authenticates no more from now on.
  // NotFound if there is none of that name.
  absl::StatusOr<cairn::v1::Token> Revoke(const std::string& name);

  // The principal of `secret`; Unauthenticated (without the secret) if it is
  // unknown, expired or revoked. Records the use (kept in the store to
  // within kLastUseResolution).
  absl::StatusOr<Principal> Authenticate(const std::string& secret,
                                         absl::Time now);

  // Who `secret` names, for the audit log: the principal of a known token
  // (also a revoked or expired one), nullopt for an unknown secret. Checks
  // nothing and records no use.
  std::optional<Principal> Identify(const std::string& secret) const;

  // A new secret for a training job of `trial` (a trial name): it may only
  // act on that trial (see permissions.h). Replaces the trial's previous
  // job token. In memory only.
  absl::StatusOr<std::string> MintTrialToken(const std::string& trial);

  // Ends `trial`'s job token, if it has one: called when its job has
  // exited, so that a token the job leaked (printed into its log, which
  // viewers may read) acts on nothing afterwards.
  void ForgetTrialToken(const std::string& trial);

  // An in-memory secret that authenticates as the named token `name` (its
  // role; refused like it once it is revoked or expired): how cairnd's
  // SageMaker endpoint, having verified a request signed with the token's
  // AWS key (aws_keys.h), calls its own gRPC services as that token. The
  // same secret until cairnd ends. NotFound if there is no such token.
  absl::StatusOr<std::string> SessionSecret(const std::string& name);

  // Whether no named token exists (a fresh store).
  bool empty() const;

  static constexpr absl::Duration kLastUseResolution = absl::Minutes(1);

 private:
  explicit TokenRegistry(TokenStore* store) : store_(store) {}

  // The name of the named token whose secret or session secret hashes to
  // `hash`; nullptr if none.
  const std::string* NamedTokenOf(const std::string& hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  TokenStore* const store_;
  mutable absl::Mutex mu_;
  // name -> record.
  absl::flat_hash_map<std::string, cairn::v1::TokenRecord> records_
      ABSL_GUARDED_BY(mu_);
  // sha256 -> name, for named tokens.
  absl::flat_hash_map<std::string, std::string> by_hash_ ABSL_GUARDED_BY(mu_);
  // sha256 -> name and name -> secret, for session secrets.
  absl::flat_hash_map<std::string, std::string> session_by_hash_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> session_by_name_
      ABSL_GUARDED_BY(mu_);
  // sha256 -> trial, and trial -> sha256, for job tokens.
  absl::flat_hash_map<std::string, std::string> job_by_hash_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> job_hash_by_trial_
      ABSL_GUARDED_BY(mu_);
  // Serialises store writes of records (so they land in the order made).
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

// Writes a new admin token's secret to `path` with mode 0600 (replacing
// any file there). FailedPrecondition naming the path on error.
absl::Status WriteSecretFile(const std::string& path,
                             const std::string& secret);

// On a registry with no token: creates the token "admin" (role admin) and
// writes its secret to <data_dir>/admin.token (mode 0600). Returns the path
// written, or "" if tokens existed already.
absl::StatusOr<std::string> BootstrapAdminToken(TokenRegistry* registry,
                                                const std::string& data_dir,
                                                absl::Time now);

}  // namespace cairn::auth

#endif  // CAIRN_AUTH_TOKEN_REGISTRY_H_
