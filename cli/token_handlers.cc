// The cairn token subcommands: create, list, revoke (AdminService).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/roles.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "google/protobuf/util/time_util.h"
#include "util/flags/durations.h"

namespace cairn::cli {
namespace {

namespace v1 = cairn::v1;
using google::protobuf::util::TimeUtil;

std::string TimeText(bool set, const google::protobuf::Timestamp& t,
                     const std::string& unset) {
  return set ? TimeUtil::ToString(t) : unset;
}

}  // namespace

absl::Status TokenCreate(Context& c) {
  v1::CreateTokenRequest request;
  request.set_name(c.opt.token_name);
  absl::StatusOr<v1::Role> role = api::ParseRole("--role", c.opt.token_role);
  if (!role.ok()) return role.status();
  request.set_role(*role);
  if (!c.opt.token_expires.empty()) {
    absl::StatusOr<absl::Duration> ttl =
        util::flags::ParseFlagDuration("--expires", c.opt.token_expires);
    if (!ttl.ok()) return ttl.status();
    request.mutable_ttl()->set_seconds(absl::ToInt64Seconds(*ttl));
  }
  auto response =
      c.Client().Call(&StudyClient::AdminStub::CreateToken, request);
  if (!response.ok()) return response.status();
  if (!c.opt.token_aws) {
    *c.out << response->secret() << "\n";
    return absl::OkStatus();
  }
  // With --aws, stdout is an AWS credentials stanza alone, so that
  // `>> ~/.aws/credentials` keeps the file readable; the Cairn secret
  // (shown only now) goes to stderr.
  *c.err << "cairn: token '" << c.opt.token_name
         << "' (for the cairn CLI and REST API; shown once): "
         << response->secret() << "\n";
  v1::GetAwsAccessKeyRequest key_request;
  key_request.set_name(c.opt.token_name);
  auto key =
      c.Client().Call(&StudyClient::KeyStub::GetAwsAccessKey, key_request);
  if (!key.ok()) return key.status();
  // A blank line first, in case the file does not end with a newline.
  *c.out << "\n[" << c.opt.token_name << "]\n"
         << "aws_access_key_id = " << key->access_key_id() << "\n"
         << "aws_secret_access_key = " << key->secret_access_key() << "\n";
  return absl::OkStatus();
}

absl::Status TokenList(Context& c) {
  auto response = c.Client().Call(&StudyClient::AdminStub::ListTokens,
                                  v1::ListTokensRequest());
  if (!response.ok()) return response.status();
  if (c.opt.json) return WriteJson(*response, *c.out);
  std::vector<std::vector<std::string>> rows;
  for (const v1::Token& t : response->tokens()) {
    rows.push_back({t.name(), std::string(api::RoleName(t.role())),
                    TimeText(true, t.create_time(), ""),
                    TimeText(t.has_expire_time(), t.expire_time(), "never"),
                    TimeText(t.has_last_use_time(), t.last_use_time(), "never"),
                    t.revoked() ? "revoked" : "active"});
  }
  *c.out << FormatTable(
      {"NAME", "ROLE", "CREATED", "EXPIRES", "LAST USED", "STATE"}, rows);
  return absl::OkStatus();
}

absl::Status TokenRevoke(Context& c) {
  v1::RevokeTokenRequest request;
  request.set_name(c.opt.token_name);
  auto response =
      c.Client().Call(&StudyClient::AdminStub::RevokeToken, request);
  if (!response.ok()) return response.status();
  *c.out << "revoked token " << response->name() << "\n";
  return absl::OkStatus();
}

}  // namespace cairn::cli
