// AI Platform job configs -> Job -> study: parsing leniency, unknown and
// ignored fields, job ids, the StudySpec and job template of a job, and the
// Job resource derived from a study's trials.
#include "aiplatform/job_config.h"

#include <string>

#include "aiplatform/job_id.h"
#include "aiplatform/job_study.h"
#include "aiplatform/job_view.h"
#include "gtest/gtest.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using cairn::v1::ReplicaGroup;

TEST(JobConfigTest, ReadsTheExampleConfigUnchanged) {
  absl::StatusOr<JobConfig> config =
      LoadJobConfigFile(std::string(CAIRN_SOURCE_DIR) +
                        "/examples/aiplatform/hptuning_config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  const auto& hp = config->job.training_input().hyperparameters();
  EXPECT_EQ(hp.goal(), cairn::v1::HyperparameterSpec::MAXIMIZE);
  EXPECT_EQ(hp.max_trials(), 4);
  EXPECT_EQ(hp.max_parallel_trials(), 2);
  EXPECT_TRUE(hp.enable_trial_early_stopping());  // "TRUE"
  ASSERT_EQ(hp.params_size(), 4);
  EXPECT_EQ(hp.params(1).type(),
            cairn::v1::ParameterSpecAip::INTEGER);  // "integer"
  EXPECT_EQ(hp.params(0).scale_type(),
            cairn::v1::ParameterSpecAip::UNIT_LOG_SCALE);
  EXPECT_EQ(hp.params(2).categorical_values_size(), 3);
  EXPECT_EQ(hp.params(3).discrete_values(2), 64);
  EXPECT_EQ(config->job.labels().at("team"), "vision");
  EXPECT_EQ(config->ignored_fields,
            (std::vector<std::string>{"trainingInput.region",
                                      "trainingInput.runtimeVersion",
                                      "trainingInput.pythonVersion"}));
}

TEST(JobConfigTest, NumbersAsStringsCountsAndDurations) {
  absl::StatusOr<JobConfig> config = ParseJobConfig(R"(
trainingInput:
  scaleTier: custom
  masterType: n1-standard-8
  workerType: n1-standard-8
  workerCount: "2"
  parameterServerType: n1-highmem-8
  parameterServerCount: 1
  masterConfig: {acceleratorConfig: {count: 1, type: NVIDIA_TESLA_T4}}
  useChiefInTfConfig: true
  scheduling: {maxRunningTime: 7200s}
  hyperparameters:
    maxTrials: !!int 10
    params:
    - {parameterName: c, type: CATEGORICAL, categoricalValues: [1, "two"]}
)");
  ASSERT_TRUE(config.ok()) << config.status();
  const auto& in = config->job.training_input();
  EXPECT_EQ(in.scale_tier(), cairn::v1::TrainingInput::CUSTOM);
  EXPECT_EQ(in.worker_count(), 2);
  EXPECT_EQ(in.parameter_server_count(), 1);
  EXPECT_EQ(in.master_config().accelerator_config().count(), 1);
  EXPECT_EQ(in.scheduling().max_running_time().seconds(), 7200);
  EXPECT_EQ(in.hyperparameters().max_trials(), 10);
  EXPECT_EQ(in.hyperparameters().params(0).categorical_values(0), "1");
}

TEST(JobConfigTest, UnknownFieldIsNamedInCamelCase) {
  absl::StatusOr<JobConfig> config = ParseJobConfig(
      "trainingInput:\n  hyperparameters:\n    goal: MAXIMIZE\n    maxTrails: "
      "3\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(
                "unknown field \"trainingInput.hyperparameters.maxTrails\""),
            std::string::npos)
      << config.status();
}

TEST(JobConfigTest, BadYamlAndBadValues) {
  EXPECT_FALSE(ParseJobConfig("trainingInput: [unclosed").ok());
  EXPECT_FALSE(ParseJobConfig("- a list").ok());
  absl::StatusOr<JobConfig> bad_enum =
      ParseJobConfig("trainingInput:\n  scaleTier: HUGE\n");
  ASSERT_FALSE(bad_enum.ok());
  EXPECT_EQ(bad_enum.status().message(),
            "trainingInput.scaleTier: invalid value \"HUGE\"");
}

TEST(JobIdTest, FollowsAiPlatformRules) {
  EXPECT_TRUE(ValidateJobId("census_2024_01").ok());
  EXPECT_TRUE(ValidateJobId(std::string(128, 'a')).ok());
  EXPECT_FALSE(ValidateJobId("").ok());
  EXPECT_FALSE(ValidateJobId("1job").ok());
  EXPECT_FALSE(ValidateJobId("_job").ok());
  EXPECT_FALSE(ValidateJobId("job-1").ok());
  EXPECT_FALSE(ValidateJobId("job.1").ok());
  EXPECT_FALSE(ValidateJobId(std::string(129, 'a')).ok());
  EXPECT_NE(ValidateJobId("job-1").message().find("'job-1'"),
            std::string::npos);
}

Job TuningJob() {
  absl::StatusOr<JobConfig> config =
      LoadJobConfigFile(std::string(CAIRN_SOURCE_DIR) +
                        "/examples/aiplatform/hptuning_config.yaml");
  Job job = config->job;
  job.set_job_id("tune1");
  job.mutable_training_input()->set_python_module("trainer.task");
  job.mutable_training_input()->add_args("--steps=3");
  return job;
}

TEST(JobStudyTest, TuningJobBecomesStudySpec) {
  absl::StatusOr<cairn::v1::Study> study =
      MakeJobStudy(TuningJob(), StudyOptions{"/stage/tune1.package"});
  ASSERT_TRUE(study.ok()) << study.status();
  const cairn::v1::StudySpec& spec = study->spec();
  EXPECT_EQ(study->display_name(), "tune1");
  ASSERT_EQ(spec.parameters_size(), 4);
  EXPECT_EQ(spec.parameters(0).parameter_id(), "learning_rate");
  EXPECT_EQ(spec.parameters(0).scale_type(),
            cairn::v1::ParameterSpec::UNIT_LOG_SCALE);
  EXPECT_EQ(spec.parameters(3).type(), cairn::v1::ParameterSpec::DISCRETE);
  EXPECT_EQ(spec.metrics(0).metric_id(), "accuracy");
  EXPECT_EQ(spec.metrics(0).goal(), cairn::v1::MetricSpec::MAXIMIZE);
  EXPECT_EQ(spec.max_trials(), 4);
  EXPECT_EQ(spec.max_parallel_trials(), 2);
  // 0: the default failure criterion of job studies decides.
  EXPECT_EQ(spec.max_failed_trials(), 0);
  EXPECT_TRUE(spec.early_stopping().has_median());
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  EXPECT_EQ(t.command(0), "python3");
  EXPECT_EQ(t.command(2), "trainer.task");
  EXPECT_EQ(t.command(3), "--steps=3");
  EXPECT_EQ(t.env().at("PYTHONPATH"), "/stage/tune1.package");
  EXPECT_EQ(t.job_dir(), "tune1");  // <jobs-root>/tune1
  // maxRunningTime bounds the job (JobManager), not each attempt.
  EXPECT_FALSE(t.has_max_running_time());
  EXPECT_EQ(t.ai_platform_job_id(), "tune1");
  EXPECT_EQ(t.replicas_size(), 0);
  EXPECT_NE(t.tf_config_job_json().find("\"pythonModule\":\"trainer.task\""),
            std::string::npos);
}

TEST(JobStudyTest, PlainJobIsOneTrialWithoutParameters) {
  Job job;
  job.set_job_id("plain");
  job.mutable_training_input()->set_python_module("m");
  job.mutable_training_input()->set_scale_tier(
      cairn::v1::TrainingInput::BASIC_GPU);
  absl::StatusOr<cairn::v1::Study> study =
      MakeJobStudy(job, StudyOptions{"/s"});
  ASSERT_TRUE(study.ok()) << study.status();
  EXPECT_EQ(study->spec().parameters_size(), 0);
  EXPECT_EQ(study->spec().max_trials(), 1);
  EXPECT_EQ(study->spec().job_template().gpus_per_trial(), 1);
}

TEST(JobStudyTest, CustomTierBecomesReplicaGroups) {
  absl::StatusOr<JobConfig> config =
      LoadJobConfigFile(std::string(CAIRN_SOURCE_DIR) +
                        "/examples/aiplatform/distributed_config.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  Job job = config->job;
  job.set_job_id("dist");
  job.mutable_training_input()->set_python_module("m");
  job.mutable_training_input()
      ->mutable_worker_config()
      ->mutable_accelerator_config()
      ->set_count(2);
  absl::StatusOr<cairn::v1::Study> study =
      MakeJobStudy(job, StudyOptions{"/s"});
  ASSERT_TRUE(study.ok()) << study.status();
  const auto& r = study->spec().job_template().replicas();
  ASSERT_EQ(r.size(), 3);
  EXPECT_EQ(r[0].type(), ReplicaGroup::MASTER);
  EXPECT_EQ(r[0].count(), 1);
  EXPECT_EQ(r[1].type(), ReplicaGroup::WORKER);
  EXPECT_EQ(r[1].count(), 2);
  EXPECT_EQ(r[1].gpus_per_replica(), 2);
  EXPECT_EQ(r[2].type(), ReplicaGroup::PARAMETER_SERVER);
  EXPECT_EQ(r[2].count(), 1);
  EXPECT_GT(study->spec().job_template().max_restarts(), 0);
}

TEST(JobStudyTest, RefusesWhatCannotRunNamingTheField) {
  Job job;
  job.set_job_id("j");
  auto msg = [&job] {
    return std::string(
        MakeJobStudy(job, StudyOptions{"/s"}).status().message());
  };
  EXPECT_NE(msg().find("trainingInput.pythonModule"), std::string::npos);
  job.mutable_training_input()->set_python_module("m");
  job.mutable_training_input()->set_worker_count(2);
  EXPECT_NE(msg().find("trainingInput.workerCount: only with scaleTier CUSTOM"),
            std::string::npos);
  job.mutable_training_input()->set_scale_tier(
      cairn::v1::TrainingInput::CUSTOM);
  EXPECT_NE(msg().find("trainingInput.masterType"), std::string::npos);
  job.mutable_training_input()->set_master_type("n1");
  EXPECT_NE(msg().find("trainingInput.workerType"), std::string::npos);
  job.mutable_training_input()->set_worker_type("n1");
  EXPECT_TRUE(MakeJobStudy(job, StudyOptions{"/s"}).ok());
  job.mutable_training_input()
      ->mutable_hyperparameters()
      ->add_params()
      ->set_parameter_name("x");
  EXPECT_NE(msg().find("trainingInput.hyperparameters.params[0].type"),
            std::string::npos);
}

cairn::v1::Trial Done(int64_t id, double value) {
  cairn::v1::Trial t;
  t.set_id(id);
  t.set_state(cairn::v1::Trial::SUCCEEDED);
  auto* p = t.add_parameters();
  p->set_parameter_id("layers");
  p->mutable_value()->set_number_value(3);
  auto* m = t.mutable_final_measurement()->add_metrics();
  m->set_metric_id("accuracy");
  m->set_value(value);
  t.mutable_final_measurement()->set_step_count(7);
  t.mutable_start_time()->set_seconds(100 + id);
  t.mutable_end_time()->set_seconds(200 + id);
  return t;
}

TEST(JobViewTest, StatesAndTrainingOutput) {
  cairn::v1::JobRecord record;
  *record.mutable_job() = TuningJob();
  cairn::v1::Study study;
  study.set_state(cairn::v1::Study::ACTIVE);
  study.mutable_spec()->set_max_trials(2);
  EXPECT_EQ(JobView(record, study, {}).state(), Job::QUEUED);
  cairn::v1::Trial queued;
  queued.set_id(2);
  queued.set_state(cairn::v1::Trial::ACTIVE);
  EXPECT_EQ(JobView(record, study, {queued}).state(), Job::PREPARING);
  Job running = JobView(record, study, {Done(1, 0.5), queued});
  EXPECT_EQ(running.state(), Job::RUNNING);
  EXPECT_FALSE(running.has_end_time());
  Job done = JobView(record, study, {Done(1, 0.5), Done(2, 0.75)});
  EXPECT_EQ(done.state(), Job::SUCCEEDED);
  EXPECT_EQ(done.end_time().seconds(), 202);
  EXPECT_EQ(done.start_time().seconds(), 101);
  const cairn::v1::TrainingOutput& out = done.training_output();
  EXPECT_TRUE(out.is_hyperparameter_tuning_job());
  EXPECT_EQ(out.hyperparameter_metric_tag(), "accuracy");
  EXPECT_EQ(out.completed_trial_count(), 2);
  ASSERT_EQ(out.trials_size(), 2);
  EXPECT_EQ(out.trials(1).trial_id(), "2");
  EXPECT_EQ(out.trials(1).hyperparameters().at("layers"), "3");
  EXPECT_EQ(out.trials(1).final_metric().objective_value(), 0.75);
  EXPECT_EQ(out.trials(1).final_metric().training_step(), 7);
  record.add_prior_trial_ids(1);  // resumePreviousJobId data: left out.
  EXPECT_EQ(JobView(record, study, {Done(1, 0.5), Done(2, 0.75)})
                .training_output()
                .trials_size(),
            1);
  record.clear_prior_trial_ids();
  record.set_cancel_requested(true);
  cairn::v1::Trial alive = queued;
  alive.mutable_job()->set_state(cairn::v1::TrialJob::RUNNING);
  EXPECT_EQ(JobView(record, study, {alive}).state(), Job::CANCELLING);
  EXPECT_EQ(JobView(record, study, {Done(1, 0.5)}).state(), Job::CANCELLED);
}

}  // namespace
}  // namespace cairn::aiplatform
