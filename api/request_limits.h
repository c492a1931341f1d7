// The input limits of the cairn.v1 API (api/limits.h) checked on
// any request before the server acts on it: every string (length and, for
// ids and names, character set), every repeated field and map (entries),
// the integers with a range (page sizes, suggestion_count, max_bytes), the
// parameters of a study, the nesting of conditional parameters, and every
// google.protobuf.Duration and Timestamp (within the ranges their
// definitions give, so that anything stored can be printed as JSON).
//
// Errors are InvalidArgument, name the field by its full path, e.g.
//   study.spec.parameters[3].parameter_id: 1048576 characters, more than the
//   limit of 128: "xxxx..."... (1048576 bytes)
// echo at most 64 characters of the value (util::QuoteForError) and stay under
// 1 KB. The first problem found, in field order, is reported.
//
// Pure and thread-safe. The walk is iterative: a message nested arbitrarily
// deep costs no stack, and the check stops at kMaxMessageDepth.
#ifndef CAIRN_API_REQUEST_LIMITS_H_
#define CAIRN_API_REQUEST_LIMITS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/study.pb.h"
#include "google/protobuf/message.h"

namespace cairn::api {

// Checks `message` and everything in it. `path` is put before every field's
// path in errors: a StudyManager checking the Study of a CreateStudyRequest
// passes "study", so its errors read like the service's.
absl::Status CheckRequestLimits(const google::protobuf::Message& message,
                                absl::string_view path = "");

// CheckRequestLimits(measurement, path), for the measurement hot path
// (StudyManager checks every measurement it stores): a measurement within
// the limits is passed without the reflective walk, whose cost would be a
// large share of what a streamed measurement costs; one that is not gets
// the walk's error.
absl::Status CheckMeasurementLimits(const cairn::v1::Measurement& measurement,
                                    absl::string_view path);

}  // namespace cairn::api

#endif  // CAIRN_API_REQUEST_LIMITS_H_
