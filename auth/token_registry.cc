// See token_registry.h.
#include "auth/token_registry.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "util/time_proto.h"

namespace cairn::auth {
namespace {

constexpr char kAdminTokenName[] = "admin";
constexpr char kAdminTokenFile[] = "admin.token";

absl::Status Unauthenticated(absl::string_view why) {
  return absl::UnauthenticatedError(
      absl::StrCat(why,
                   "; send 'authorization: Bearer <token>' (cairn: "
                   "$CAIRN_TOKEN, $CAIRN_TOKEN_FILE, --token-file or "
                   "~/.config/cairn/token)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenRegistry>> TokenRegistry::Open(
    TokenStore* store) {
  absl::StatusOr<std::vector<cairn::v1::TokenRecord>> records =
      store->LoadTokenRecords();
  if (!records.ok()) return records.status();
  std::unique_ptr<TokenRegistry> registry(new TokenRegistry(store));
  absl::MutexLock lock(&registry->mu_);
  for (cairn::v1::TokenRecord& r : *records) {
    registry->by_hash_[r.sha256()] = r.token().name();
    registry->records_[r.token().name()] = std::move(r);
  }
  return registry;
}

absl::StatusOr<CreatedToken> TokenRegistry::Create(const std::string& name,
                                                   cairn::v1::Role role,
                                                   absl::Duration ttl,
                                                   absl::Time now) {
  if (absl::Status s = ValidateTokenName(name); !s.ok()) return s;
  if (role < cairn::v1::VIEWER || role > cairn::v1::ADMIN) {
    return absl::InvalidArgumentError(absl::StrCat(
        "role: ", static_cast<int>(role), " is not viewer, editor or admin"));
  }
  absl::StatusOr<std::string> secret = GenerateTokenSecret();
  if (!secret.ok()) return secret.status();
  cairn::v1::TokenRecord record;
  cairn::v1::Token* token = record.mutable_token();
  token->set_name(name);
  token->set_role(role);
  *token->mutable_create_time() = util::ToProtoTimestamp(now);
  if (ttl > absl::ZeroDuration()) {
    *token->mutable_expire_time() = util::ToProtoTimestamp(now + ttl);
  }
  record.set_sha256(TokenSha256(*secret));
  absl::MutexLock write_lock(&write_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (records_.contains(name)) {
      return absl::AlreadyExistsError(
          absl::StrCat("name: a token named '", name,
                       "' exists already (names are never reused)"));
    }
  }
  if (absl::Status s = store_->PutTokenRecord(record); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  by_hash_[record.sha256()] = name;
  records_[name] = record;
  return CreatedToken{record.token(), *std::move(secret)};
}

std::vector<cairn::v1::Token> TokenRegistry::List() const {
  std::vector<cairn::v1::Token> tokens;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, record] : records_)
      tokens.push_back(record.token());
  }
  std::sort(tokens.begin(), tokens.end(),
            [](const cairn::v1::Token& a, const cairn::v1::Token& b) {
              return a.name() < b.name();
            });
  return tokens;
}

absl::StatusOr<cairn::v1::Token> TokenRegistry::Revoke(
    const std::string& name) {
  absl::MutexLock write_lock(&write_mu_);
  cairn::v1::TokenRecord record;
  {
    absl::MutexLock lock(&mu_);
    auto it = records_.find(name);
    if (it == records_.end()) {
      return absl::NotFoundError(
          absl::StrCat("name: no token named '", name.substr(0, 64), "'"));
    }
    // Refused from now on, even before the record is durable.
    it->second.mutable_token()->set_revoked(true);
    record = it->second;
  }
  if (absl::Status s = store_->PutTokenRecord(record); !s.ok()) return s;
  return record.token();
}

absl::StatusOr<Principal> TokenRegistry::Authenticate(const std::string& secret,
                                                      absl::Time now) {
  const std::string hash = TokenSha256(secret);
  cairn::v1::TokenRecord to_write;
  Principal principal;
  {
    absl::MutexLock lock(&mu_);
    if (auto job = job_by_hash_.find(hash); job != job_by_hash_.end()) {
      return Principal{absl::StrCat("job:", job->second), cairn::v1::EDITOR,
                       job->second};
    }
    const std::string* name = NamedTokenOf(hash);
    if (name == nullptr) return Unauthenticated("unknown token");
    cairn::v1::TokenRecord& record = records_[*name];
    const cairn::v1::Token& token = record.token();
    if (token.revoked()) {
      return Unauthenticated(
          absl::StrCat("token '", token.name(), "' was revoked"));
    }
    if (token.has_expire_time() &&
        util::FromProtoTimestamp(token.expire_time()) <= now) {
      return Unauthenticated(
          absl::StrCat("token '", token.name(), "' has expired"));
    }
    principal = Principal{token.name(), token.role(), ""};
    const bool stale = !token.has_last_use_time() ||
                       now - util::FromProtoTimestamp(token.last_use_time()) >=
                           kLastUseResolution;
    if (!stale) return principal;
    *record.mutable_token()->mutable_last_use_time() =
        util::ToProtoTimestamp(now);
    to_write = record;
  }
  // Best effort: a failed write only leaves last use older on disk.
  (void)store_->PutTokenRecord(to_write);
  return principal;
}

std::optional<Principal> TokenRegistry::Identify(
    const std::string& secret) const {
  const std::string hash = TokenSha256(secret);
  absl::MutexLock lock(&mu_);
  if (auto job = job_by_hash_.find(hash); job != job_by_hash_.end()) {
    return Principal{absl::StrCat("job:", job->second), cairn::v1::EDITOR,
                     job->second};
  }
  const std::string* name = NamedTokenOf(hash);
  if (name == nullptr) return std::nullopt;
  const cairn::v1::Token& token = records_.at(*name).token();
  return Principal{token.name(), token.role(), ""};
}

absl::StatusOr<std::string> TokenRegistry::MintTrialToken(
    const std::string& trial) {
  absl::StatusOr<std::string> secret = GenerateTokenSecret();
  if (!secret.ok()) return secret.status();
  const std::string hash = TokenSha256(*secret);
  absl::MutexLock lock(&mu_);
  if (auto old = job_hash_by_trial_.find(trial);
      old != job_hash_by_trial_.end()) {
    job_by_hash_.erase(old->second);
  }
  job_hash_by_trial_[trial] = hash;
  job_by_hash_[hash] = trial;
  return secret;
}

const std::string* TokenRegistry::NamedTokenOf(const std::string& hash) const {
  if (auto it = by_hash_.find(hash); it != by_hash_.end()) return &it->second;
  if (auto it = session_by_hash_.find(hash); it != session_by_hash_.end()) {
    return &it->second;
  }
  return nullptr;
}

absl::StatusOr<std::string> TokenRegistry::SessionSecret(
    const std::string& name) {
  absl::StatusOr<std::string> fresh = GenerateTokenSecret();
  if (!fresh.ok()) return fresh.status();
  absl::MutexLock lock(&mu_);
  if (!records_.contains(name)) {
    return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
  }
  auto [it, inserted] = session_by_name_.emplace(name, *fresh);
  if (inserted) session_by_hash_[TokenSha256(*fresh)] = name;
  return it->second;
}

void TokenRegistry::ForgetTrialToken(const std::string& trial) {
  absl::MutexLock lock(&mu_);
  auto it = job_hash_by_trial_.find(trial);
  if (it == job_hash_by_trial_.end()) return;
  job_by_hash_.erase(it->second);
  job_hash_by_trial_.erase(it);
}

bool TokenRegistry::empty() const {
  absl::MutexLock lock(&mu_);
  return records_.empty();
}

absl::Status WriteSecretFile(const std::string& path,
                             const std::string& secret) {
  ::unlink(path.c_str());
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const std::string text = secret + "\n";
  bool ok = fd >= 0 &&
            ::write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  const int error = errno;
  if (fd >= 0) ok = (::close(fd) == 0) && ok;
  if (ok) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot write the admin token to '", path, "': ", std::strerror(error)));
}

absl::StatusOr<std::string> BootstrapAdminToken(TokenRegistry* registry,
                                                const std::string& data_dir,
                                                absl::Time now) {
  if (!registry->empty()) return std::string();
  const std::string path =
      (std::filesystem::path(data_dir) / kAdminTokenFile).string();
  absl::StatusOr<CreatedToken> created = registry->Create(
      kAdminTokenName, cairn::v1::ADMIN, absl::ZeroDuration(), now);
  if (!created.ok()) return created.status();
  if (absl::Status s = WriteSecretFile(path, created->secret); !s.ok()) {
    return s;
  }
  return path;
}

}  // namespace cairn::auth
