// Which studies cairnd runs as training jobs: one home for the rule that the
// job runner, the failure policy and the services share.
#ifndef CAIRN_API_JOB_STUDIES_H_
#define CAIRN_API_JOB_STUDIES_H_

#include "cairn/v1/study.pb.h"

namespace cairn::api {

// True when cairnd runs each trial of `spec` as a training job: its
// job_template names a command or a container image.
inline bool IsJobStudy(const cairn::v1::StudySpec& spec) {
  return spec.has_job_template() && (spec.job_template().command_size() > 0 ||
                                     spec.job_template().has_container());
}

}  // namespace cairn::api

#endif  // CAIRN_API_JOB_STUDIES_H_
