// See job_study.h.
#include "aiplatform/job_study.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "aiplatform/job_config.h"
#include "aiplatform/job_container.h"
#include "aiplatform/job_schedule.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::HyperparameterSpec;
using cairn::v1::ParameterSpecAip;
using cairn::v1::ReplicaGroup;
using cairn::v1::TrainingInput;

// Replicas of one kind at most: one machine runs them all.
constexpr int64_t kMaxReplicaCount = 64;
constexpr int64_t kMaxGpusPerReplica = 64;

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("trainingInput.", field, ": ", why));
}

absl::StatusOr<cairn::v1::ParameterSpec> MakeParameter(
    const ParameterSpecAip& in, const std::string& field) {
  cairn::v1::ParameterSpec out;
  out.set_parameter_id(in.parameter_name());
  switch (in.type()) {
    case ParameterSpecAip::DOUBLE:
      out.set_type(cairn::v1::ParameterSpec::DOUBLE);
      break;
    case ParameterSpecAip::INTEGER:
      out.set_type(cairn::v1::ParameterSpec::INTEGER);
      break;
    case ParameterSpecAip::CATEGORICAL:
      out.set_type(cairn::v1::ParameterSpec::CATEGORICAL);
      break;
    case ParameterSpecAip::DISCRETE:
      out.set_type(cairn::v1::ParameterSpec::DISCRETE);
      break;
    default:
      return Bad(absl::StrCat(field, ".type"),
                 "required: DOUBLE, INTEGER, CATEGORICAL or DISCRETE");
  }
  out.set_min_value(in.min_value());
  out.set_max_value(in.max_value());
  *out.mutable_categorical_values() = in.categorical_values();
  *out.mutable_discrete_values() = in.discrete_values();
  // NONE (unset) is linear, as in Cairn.
  out.set_scale_type(
      static_cast<cairn::v1::ParameterSpec::ScaleType>(in.scale_type()));
  return out;
}

absl::Status AddSearch(const HyperparameterSpec& hp,
                       cairn::v1::StudySpec& spec) {
  for (int i = 0; i < hp.params_size(); ++i) {
    absl::StatusOr<cairn::v1::ParameterSpec> p = MakeParameter(
        hp.params(i), absl::StrCat("hyperparameters.params[", i, "]"));
    if (!p.ok()) return p.status();
    *spec.add_parameters() = *std::move(p);
  }
  if (hp.params_size() == 0) {
    return Bad("hyperparameters.params", "at least one parameter is required");
  }
  cairn::v1::MetricSpec* metric = spec.add_metrics();
  metric->set_metric_id(hp.hyperparameter_metric_tag().empty()
                            ? kDefaultMetricTag
                            : hp.hyperparameter_metric_tag());
  metric->set_goal(hp.goal() == HyperparameterSpec::MINIMIZE
                       ? cairn::v1::MetricSpec::MINIMIZE
                       : cairn::v1::MetricSpec::MAXIMIZE);
  switch (hp.algorithm()) {
    case HyperparameterSpec::GRID_SEARCH:
      spec.set_algorithm(cairn::v1::StudySpec::GRID_SEARCH);
      break;
    case HyperparameterSpec::RANDOM_SEARCH:
      spec.set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
      break;
    default:  // Bayesian optimization: Cairn's default (GP bandit).
      spec.set_algorithm(cairn::v1::StudySpec::ALGORITHM_UNSPECIFIED);
  }
  spec.set_max_trials(hp.max_trials() > 0 ? hp.max_trials() : 1);
  spec.set_max_parallel_trials(
      hp.max_parallel_trials() > 0 ? hp.max_parallel_trials() : 1);
  if (hp.max_failed_trials() > spec.max_trials()) {
    return Bad("hyperparameters.maxFailedTrials",
               absl::StrCat(hp.max_failed_trials(), " is more than maxTrials (",
                            spec.max_trials(), ")"));
  }
  // 0 ("the service decides"): the default failure criterion of job
  // studies (docs/training-jobs.md, "When a study fails").
  spec.set_max_failed_trials(hp.max_failed_trials());
  if (hp.enable_trial_early_stopping())
    spec.mutable_early_stopping()->mutable_median();
  return absl::OkStatus();
}

// A plain training job: one trial without parameters, run once.
void AddPlainRun(cairn::v1::StudySpec& spec) {
  cairn::v1::MetricSpec* metric = spec.add_metrics();
  metric->set_metric_id(kDefaultMetricTag);
  metric->set_goal(cairn::v1::MetricSpec::MAXIMIZE);
  spec.set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  spec.set_max_trials(1);
  spec.set_max_parallel_trials(1);
  spec.set_max_failed_trials(1);
}

struct Group {
  const char* name;  // config field prefix, e.g. "worker"
  ReplicaGroup::Type type;
  int64_t count;
  const std::string* machine_type;
  const cairn::v1::ReplicaConfig* config;
};

absl::Status CheckGpus(const Group& g) {
  const int64_t gpus = g.config->accelerator_config().count();
  if (gpus < 0 || gpus > kMaxGpusPerReplica) {
    return Bad(absl::StrCat(g.name, "Config.acceleratorConfig.count"),
               absl::StrCat(gpus, " is not in [0, ", kMaxGpusPerReplica, "]"));
  }
  return absl::OkStatus();
}

// scaleTier and the replica fields -> gpus_per_trial or replica groups.
absl::Status AddTier(const TrainingInput& in,
                     cairn::v1::TrialJobTemplate& tmpl) {
  const Group groups[] = {
      {"worker", ReplicaGroup::WORKER, in.worker_count(), &in.worker_type(),
       &in.worker_config()},
      {"parameterServer", ReplicaGroup::PARAMETER_SERVER,
       in.parameter_server_count(), &in.parameter_server_type(),
       &in.parameter_server_config()},
      {"evaluator", ReplicaGroup::EVALUATOR, in.evaluator_count(),
       &in.evaluator_type(), &in.evaluator_config()},
  };
  const Group master{"master", ReplicaGroup::MASTER, 1, &in.master_type(),
                     &in.master_config()};
  if (absl::Status s = CheckGpus(master); !s.ok()) return s;
  const bool custom = in.scale_tier() == TrainingInput::CUSTOM;
  if (in.scale_tier() == TrainingInput::BASIC_TPU) {
    return Bad("scaleTier", "BASIC_TPU: this machine has no Cloud TPU");
  }
  if (custom && in.master_type().empty()) {
    return Bad("masterType", "required with scaleTier CUSTOM");
  }
  int64_t others = 0;
  for (const Group& g : groups) {
    if (g.count < 0 || g.count > kMaxReplicaCount) {
      return Bad(
          absl::StrCat(g.name, "Count"),
          absl::StrCat(g.count, " is not in [0, ", kMaxReplicaCount, "]"));
    }
    if (g.count > 0 && !custom) {
      return Bad(absl::StrCat(g.name, "Count"), "only with scaleTier CUSTOM");
    }
    if (g.count > 0 && g.machine_type->empty()) {
      return Bad(absl::StrCat(g.name, "Type"),
                 absl::StrCat("required when ", g.name, "Count is set"));
    }
    if (absl::Status s = CheckGpus(g); !s.ok()) return s;
    others += g.count;
  }
  const int master_gpus =
      static_cast<int>(in.master_config().accelerator_config().count());
  if (in.scale_tier() == TrainingInput::BASIC_GPU) {
    tmpl.set_gpus_per_trial(1);
    return absl::OkStatus();
  }
  if (others == 0) {  // One process: BASIC, STANDARD_1, PREMIUM_1, CUSTOM.
    tmpl.set_gpus_per_trial(master_gpus);
    return absl::OkStatus();
  }
  ReplicaGroup* m = tmpl.add_replicas();
  m->set_type(ReplicaGroup::MASTER);
  m->set_count(1);
  m->set_gpus_per_replica(master_gpus);
  for (const Group& g : groups) {
    if (g.count == 0) continue;
    ReplicaGroup* r = tmpl.add_replicas();
    r->set_type(g.type);
    r->set_count(static_cast<int>(g.count));
    r->set_gpus_per_replica(
        static_cast<int>(g.config->accelerator_config().count()));
  }
  return absl::OkStatus();
}

absl::StatusOr<cairn::v1::TrialJobTemplate> MakeTemplate(
    const cairn::v1::Job& job, const StudyOptions& options) {
  const TrainingInput& in = job.training_input();
  const bool container = UsesCustomContainer(in);
  if (in.python_module().empty() && !container) {
    return Bad("pythonModule",
               "required (--module-name) unless masterConfig.imageUri names "
               "a custom container");
  }
  if (absl::StartsWith(in.job_dir(), "gs://")) {
    return Bad("jobDir", absl::StrCat("'", in.job_dir().substr(0, 200),
                                      "': Cloud Storage paths are not "
                                      "supported here; give a local path"));
  }
  cairn::v1::TrialJobTemplate tmpl;
  if (!container) {
    tmpl.add_command(options.python);
    tmpl.add_command("-m");
    tmpl.add_command(in.python_module());
    for (const std::string& arg : in.args()) tmpl.add_command(arg);
    (*tmpl.mutable_env())["PYTHONPATH"] = options.staging_dir;
  }
  // Default <jobs-root>/<JOB_ID> (a relative job_dir resolves there).
  tmpl.set_job_dir(in.job_dir().empty() ? job.job_id() : in.job_dir());
  if (absl::Status s = AddTier(in, tmpl); !s.ok()) return s;
  if (absl::Status s = AddContainer(in, tmpl); !s.ok()) return s;
  // scheduling.maxRunningTime bounds the whole job, not each attempt: the
  // JobManager cancels the job (aiplatform/job_schedule.h).
  if (absl::Status s = ValidateScheduling(in.scheduling()); !s.ok()) return s;
  // AI Platform restarts a job after a VM restart, not after the program
  // failed; a replica group restarts (from its checkpoints) when a replica
  // dies.
  tmpl.set_max_restarts(tmpl.replicas_size() > 0 ? 2 : 0);
  tmpl.set_use_chief_in_tf_config(in.use_chief_in_tf_config());
  tmpl.set_ai_platform_job_id(job.job_id());
  tmpl.set_tf_config_job_json(TrainingInputJson(in));
  return tmpl;
}

}  // namespace

absl::StatusOr<cairn::v1::Study> MakeJobStudy(const cairn::v1::Job& job,
                                              const StudyOptions& options) {
  cairn::v1::Study study;
  study.set_display_name(job.job_id());
  cairn::v1::StudySpec& spec = *study.mutable_spec();
  if (job.training_input().has_hyperparameters()) {
    if (absl::Status s =
            AddSearch(job.training_input().hyperparameters(), spec);
        !s.ok()) {
      return s;
    }
  } else {
    AddPlainRun(spec);
  }
  absl::StatusOr<cairn::v1::TrialJobTemplate> tmpl = MakeTemplate(job, options);
  if (!tmpl.ok()) return tmpl.status();
  *spec.mutable_job_template() = *std::move(tmpl);
  for (const auto& [key, value] : job.labels())
    (*spec.mutable_labels())[key] = value;
  return study;
}

}  // namespace cairn::aiplatform
