// Trials as CSV (RFC 4180): one row per trial; the columns are name, id,
// state, start_time, end_time, then every parameter ("param:ID") and every
// final metric ("metric:ID") that any of the trials has, in sorted order.
#ifndef CAIRN_HTTP_TRIALS_CSV_H_
#define CAIRN_HTTP_TRIALS_CSV_H_

#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn::http {

std::string TrialsCsv(const std::vector<cairn::v1::Trial>& trials);

}  // namespace cairn::http

#endif  // CAIRN_HTTP_TRIALS_CSV_H_
