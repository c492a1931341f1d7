// A SageMaker training job is a Cairn study of one trial: the study's
// display name is the job's name and its spec carries the request
// (StudySpec.sagemaker_training_job), so the job shows in the CLI, REST
// API, web UI and metrics like any study. This file turns a request into
// that study, and the study and its trial back into the JSON SageMaker's
// Describe and List answer (timestamps as epoch seconds).
#ifndef CAIRN_SAGEMAKER_TRAINING_JOB_VIEW_H_
#define CAIRN_SAGEMAKER_TRAINING_JOB_VIEW_H_

#include <string>

#include "cairn/v1/sagemaker.pb.h"
#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

// The infeasible_reason of a trial stopped by StopTrainingJob.
inline constexpr char kStoppedReason[] = "Stopped by StopTrainingJob";

// The study to create for `request` (validated): display name, one trial
// at most (the job runner suggests it), a container job template, a metric per
// MetricDefinition (names made metric ids) or "objective", the request itself.
cairn::v1::Study TrainingJobStudy(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request);

// SageMaker's TrainingJobStatus of the job whose trial is `trial` (nullptr
// before it exists): InProgress, Stopping, Completed, Failed or Stopped.
// Stopping while the trial is STOPPING or its job is being ended (job
// record STOPPING); Stopped once ended by a stop (stopped early with its
// last measurement, CANCELLED without one) or by MaxRuntimeInSeconds.
std::string TrainingJobStatus(const cairn::v1::Trial* trial);

// TrainingJobStatus of a training job: its trial's, or Stopped when its
// study was paused before the trial existed (StopTrainingJob on a job the
// runner had not started).
std::string JobStatus(const cairn::v1::Study& study,
                      const cairn::v1::Trial* trial);

// `t` as epoch seconds, the JSON protocol's timestamps.
double EpochSeconds(const google::protobuf::Timestamp& t);

// `request` as SageMaker's JSON (its json_names), defaults left out.
nlohmann::json RequestJson(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request);

// `reason` cut to SageMaker's 1024 bytes for FailureReason, at a UTF-8
// character's boundary.
std::string FailureReasonText(std::string reason);

// FailureReason of a Failed job run by `trial`: the first 1024 bytes of
// what it wrote to /opt/ml/output/failure, else why Cairn failed it.
std::string JobFailureReason(const cairn::v1::Trial& trial);

// A metric name as a Cairn metric id: characters outside [A-Za-z0-9_./-]
// become '_', and a leading digit or punctuation gets a '_' before it.
std::string MetricIdOf(const std::string& name);

// DescribeTrainingJob's response for `study` (a training job's) and its
// trial (nullptr if none yet), with the times of training_job_times.h
// from the trial's job dir. FinalMetricDataList holds each metric's value
// in the final measurement, else in the latest of the trial's measurements
// (pass them: GetTrial) that has it.
nlohmann::json DescribeTrainingJobJson(const cairn::v1::Study& study,
                                       const cairn::v1::Trial* trial);

// One TrainingJobSummary of ListTrainingJobs (with LastModifiedTime).
nlohmann::json TrainingJobSummaryJson(const cairn::v1::Study& study,
                                      const cairn::v1::Trial* trial);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TRAINING_JOB_VIEW_H_
