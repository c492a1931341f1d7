// AI Platform custom containers: masterConfig.imageUri and its siblings as
// the job template's container (TrialJobTemplate.container), with the
// rules AI Platform states: workers, parameter servers and evaluators run
// the master's image unless their config names one; containerCommand
// replaces the ENTRYPOINT and containerArgs the CMD; trainingInput.args
// follow the ENTRYPOINT (or containerCommand, as TFX's AI Platform trainer
// sends them) and exclude containerArgs; packageUris exclude an image.
#ifndef CAIRN_AIPLATFORM_JOB_CONTAINER_H_
#define CAIRN_AIPLATFORM_JOB_CONTAINER_H_

#include "absl/status/status.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/study.pb.h"

namespace cairn::aiplatform {

// True when the job runs a custom container (masterConfig.imageUri set).
bool UsesCustomContainer(const cairn::v1::TrainingInput& in);

// Sets tmpl.container from `in` (the master's machine type as --cpus and
// --memory, MachineTypeLimits) and, for each replica group tmpl already
// has (AddTier), the group's own image, command and machine type limits.
// InvalidArgument naming the field: packageUris with an image; args with
// containerArgs; containerArgs that differ between
// groups (one argument list per job); an imageUri on another group without
// masterConfig.imageUri.
absl::Status AddContainer(const cairn::v1::TrainingInput& in,
                          cairn::v1::TrialJobTemplate& tmpl);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_CONTAINER_H_
