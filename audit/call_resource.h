// The resource an RPC acted on, read from its messages for the audit log.
#ifndef CAIRN_AUDIT_CALL_RESOURCE_H_
#define CAIRN_AUDIT_CALL_RESOURCE_H_

#include <string>

#include "google/protobuf/message.h"

namespace cairn::audit {

// From a request: its first non-empty string field of `name`,
// `trial_name`, `parent` and `destination` (in that order); "" if none.
std::string RequestResource(const google::protobuf::Message& request);

// From a successful response: its string field `name` (the study or trial
// a Create made, the token revoked); "" if it has none.
std::string ResponseResource(const google::protobuf::Message& response);

}  // namespace cairn::audit

#endif  // CAIRN_AUDIT_CALL_RESOURCE_H_
