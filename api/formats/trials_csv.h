// A study's trials as CSV (RFC 4180): `cairn trial list STUDY --csv` and
// cairnd's `/v1/studies/{id}/trials?format=csv`, one format for both.
#ifndef CAIRN_API_FORMATS_TRIALS_CSV_H_
#define CAIRN_API_FORMATS_TRIALS_CSV_H_

#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn::api::formats {

// One CSV field: quoted (with inner quotes doubled) when it holds a comma, a
// quote, a line break or leading/trailing spaces; as is otherwise.
std::string CsvField(const std::string& value);

// A header row and one row per trial, each ending "\r\n":
//   id,state,<parameters>,<metrics>,infeasible_reason
// Parameters are the spec's, conditional children included, in spec order
// (then any others the trials have); metrics are the final measurement's,
// the spec's metrics first. Cells a trial lacks are empty; numbers are
// written exactly (INTEGER values without a fraction, as ParameterValueToJson).
std::string TrialsCsv(const std::vector<cairn::v1::Trial>& trials,
                      const cairn::v1::StudySpec& spec);

}  // namespace cairn::api::formats

#endif  // CAIRN_API_FORMATS_TRIALS_CSV_H_
