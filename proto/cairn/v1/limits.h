// Limits of the cairn.v1 API that the server enforces and clients check
// before calling, kept in one place so both agree.
#ifndef CAIRN_PROTO_CAIRN_V1_LIMITS_H_
#define CAIRN_PROTO_CAIRN_V1_LIMITS_H_

namespace cairn::v1 {

// SuggestTrialsRequest.suggestion_count must be in [1, kMaxSuggestionCount].
inline constexpr int kMaxSuggestionCount = 1000;

// GetTrial and ListTrials return at most the last kMaxTrialMeasurements
// measurements of a trial (Trial.measurements_truncated says more exist):
// 1,000 measurements of a few metrics stay far below gRPC's 4 MB.
inline constexpr int kMaxTrialMeasurements = 1000;

// A ListTrials page holds at most kMaxListTrialsBytes of trials (serialized
// size; always at least one trial), so that many trials with their
// measurements never exceed gRPC's 4 MB: the page then ends early, with
// fewer than page_size trials and a next_page_token to go on from.
inline constexpr int kMaxListTrialsBytes = 3 << 20;

// GetMetricHistoryRequest.page_size: 0 means kDefaultHistoryPageSize; at most
// kMaxHistoryPageSize, as is max_points. A point is at most 36 bytes on the
// wire, so a full page stays under gRPC's 4 MB.
inline constexpr int kDefaultHistoryPageSize = 10000;
inline constexpr int kMaxHistoryPageSize = 100000;

}  // namespace cairn::v1

#endif  // CAIRN_PROTO_CAIRN_V1_LIMITS_H_
