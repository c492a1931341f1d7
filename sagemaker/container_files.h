// SageMaker's training-container contract as files on the host: the
// /opt/ml tree a job's container sees (config files, model and output
// directories), its environment, and what is read back when it exits
// (FailureReason; the archives are tar_gz.h's). Plain functions, so the
// container executor only mounts the directories they prepare.
//
// Layout of a host's directory DIR (mounted at /opt/ml):
//   DIR/input/config/{hyperparameters,resourceconfig,inputdataconfig}.json
//   DIR/input/data/            channels are mounted below, read-only
//   DIR/model/                 packed into model.tar.gz when the job ends
//   DIR/output/data/           packed into output.tar.gz
//   DIR/output/failure         the first 1024 bytes become FailureReason
#ifndef CAIRN_SAGEMAKER_CONTAINER_FILES_H_
#define CAIRN_SAGEMAKER_CONTAINER_FILES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"

namespace cairn::sagemaker {

// "algo-1", "algo-2", ... for host index 0, 1, ...
std::string HostName(int index);

// hyperparameters.json: an object of string values, keys sorted.
std::string HyperParametersJson(const std::map<std::string, std::string>& hps);

// resourceconfig.json for host `index` of `count`.
std::string ResourceConfigJson(int index, int count);

// inputdataconfig.json: one member per channel (ContentType only if given,
// TrainingInputMode, S3DistributionType, RecordWrapperType).
std::string InputDataConfigJson(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request);

// The training job's ARN (region "local", account 000000000000).
std::string TrainingJobArn(absl::string_view name);

// The container's environment: the request's Environment plus
// TRAINING_JOB_NAME and TRAINING_JOB_ARN (which win over the request's).
std::map<std::string, std::string> ContainerEnvironment(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request);

// Creates DIR's tree and writes the three config files for host `index`.
// Errors name the path.
absl::Status PrepareHostDir(
    const std::string& dir,
    const cairn::v1::SageMakerCreateTrainingJobRequest& request, int index);

// The FailureReason of a failed job: the first 1024 bytes of
// DIR/output/failure (cut at a UTF-8 boundary), or "" if there is none.
// Reads through no symbolic link.
std::string ReadFailureReason(const std::string& dir);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_CONTAINER_FILES_H_
