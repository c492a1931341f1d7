// Limits of the cairn.v1 API that the server enforces and clients check
// before calling, kept in one place so both agree.
#ifndef CAIRN_PROTO_CAIRN_V1_LIMITS_H_
#define CAIRN_PROTO_CAIRN_V1_LIMITS_H_

namespace cairn::v1 {

// SuggestTrialsRequest.suggestion_count must be in [1, kMaxSuggestionCount].
inline constexpr int kMaxSuggestionCount = 1000;

}  // namespace cairn::v1

#endif  // CAIRN_PROTO_CAIRN_V1_LIMITS_H_
