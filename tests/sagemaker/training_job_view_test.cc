// A training job as a study of one trial: the study made from a request,
// the trial's state as TrainingJobStatus, Describe's FailureReason and
// FinalMetricDataList, and ListTrainingJobs' filters, sort and paging.
#include "sagemaker/training_job_view.h"

#include "gtest/gtest.h"
#include "jobs/stop_reason.h"
#include "sagemaker/list_query.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::Trial;
using nlohmann::json;

cairn::v1::Study JobStudy() {
  auto r = ParseCreateTrainingJob(R"json({"TrainingJobName": "job-1",
    "AlgorithmSpecification": {"TrainingImage": "localhost/t:1",
      "MetricDefinitions": [{"Name": "validation:loss", "Regex": "l=(\\S+)"}]},
    "RoleArn": "arn:aws:iam::123456789012:role/R",
    "OutputDataConfig": {"S3OutputPath": "s3://bkt/out"},
    "ResourceConfig": {"InstanceType": "ml.m5.large", "VolumeSizeInGB": 1},
    "Tags": [{"Key": "team", "Value": "ml"}]})json");
  EXPECT_TRUE(r.ok()) << r.status();
  cairn::v1::Study study = TrainingJobStudy(*r);
  study.mutable_create_time()->set_seconds(1700000000);
  return study;
}

TEST(TrainingJobViewTest, StudyOfARequest) {
  const cairn::v1::Study s = JobStudy();
  EXPECT_EQ(s.display_name(), "job-1");
  EXPECT_EQ(s.spec().max_trials(), 1);
  ASSERT_EQ(s.spec().metrics_size(), 1);
  EXPECT_EQ(s.spec().metrics(0).metric_id(), "validation_loss");
  EXPECT_EQ(s.spec().sagemaker_training_job().training_job_name(), "job-1");
  EXPECT_EQ(MetricIdOf("9 lives"), "_9_lives");
}

TEST(TrainingJobViewTest, StatusOfEachTrialState) {
  EXPECT_EQ(TrainingJobStatus(nullptr), "InProgress");
  Trial t;
  const std::pair<Trial::State, const char*> cases[] = {
      {Trial::REQUESTED, "InProgress"}, {Trial::ACTIVE, "InProgress"},
      {Trial::STOPPING, "Stopping"},    {Trial::SUCCEEDED, "Completed"},
      {Trial::FAILED, "Failed"},        {Trial::INFEASIBLE, "Failed"},
      {Trial::CANCELLED, "Stopped"}};
  for (const auto& [state, status] : cases) {
    t.set_state(state);
    EXPECT_EQ(TrainingJobStatus(&t), status) << state;
  }
  t.set_state(Trial::INFEASIBLE);
  t.set_infeasible_reason(kStoppedReason);
  EXPECT_EQ(TrainingJobStatus(&t), "Stopped");
  // Stopped early (a tuning job's median rule or Hyperband), its last
  // measurement final: Stopped, as SageMaker says.
  t.set_state(Trial::SUCCEEDED);
  t.set_stopped_early(true);
  EXPECT_EQ(TrainingJobStatus(&t), "Stopped");
}

TEST(TrainingJobViewTest, StoppingUntilTheJobEndedThenStopped) {
  Trial t;
  t.set_state(Trial::STOPPING);  // StopTrainingJob asked; container runs
  t.mutable_job()->set_state(cairn::v1::TrialJob::STOPPING);
  EXPECT_EQ(TrainingJobStatus(&t), "Stopping");
  EXPECT_EQ(DescribeTrainingJobJson(JobStudy(), &t)["SecondaryStatus"],
            "Stopping");
  // Ended by the runner with its last measurement: Stopped, not Completed.
  t.set_state(Trial::SUCCEEDED);
  t.set_stopped_early(true);
  t.mutable_job()->set_state(cairn::v1::TrialJob::CANCELLED);
  EXPECT_EQ(TrainingJobStatus(&t), "Stopped");
  // A trial that ended while its container runs, stopped since.
  t.set_stopped_early(false);
  t.mutable_job()->set_state(cairn::v1::TrialJob::STOPPING);
  EXPECT_EQ(TrainingJobStatus(&t), "Stopping");
  t.mutable_job()->set_state(cairn::v1::TrialJob::CANCELLED);
  EXPECT_EQ(TrainingJobStatus(&t), "Completed");
}

TEST(TrainingJobViewTest, StoppedOrTimedOutJobKeepsItsLastMetrics) {
  Trial t;
  t.set_state(Trial::FAILED);  // MaxRuntimeInSeconds: no final measurement
  t.set_infeasible_reason(jobs::kTimeoutMessage);
  t.mutable_end_time()->set_seconds(1700000100);
  for (double v : {0.9, 0.5}) {
    auto* m = t.add_measurements()->add_metrics();
    m->set_metric_id("validation_loss");
    m->set_value(v);
  }
  t.add_measurements()->add_metrics()->set_metric_id("other");
  const json d = DescribeTrainingJobJson(JobStudy(), &t);
  EXPECT_EQ(d["TrainingJobStatus"], "Stopped");
  EXPECT_EQ(d["SecondaryStatus"], "MaxRuntimeExceeded");
  EXPECT_EQ(d["FinalMetricDataList"],
            json::parse(R"([{"MetricName": "validation:loss", "Value": 0.5,
                             "Timestamp": 1700000100.0}])"));
}

TEST(TrainingJobViewTest, AJobStoppedBeforeItsTrialIsStopped) {
  cairn::v1::Study study;
  study.set_state(cairn::v1::Study::ACTIVE);
  EXPECT_EQ(JobStatus(study, nullptr), "InProgress");
  study.set_state(cairn::v1::Study::INACTIVE);
  EXPECT_EQ(JobStatus(study, nullptr), "Stopped");
  nlohmann::json d = DescribeTrainingJobJson(study, nullptr);
  EXPECT_EQ(d["TrainingJobStatus"], "Stopped");
  EXPECT_EQ(d["SecondaryStatus"], "Stopped");
  Trial t;
  t.set_state(Trial::SUCCEEDED);
  EXPECT_EQ(JobStatus(study, &t), "Completed");  // the trial's, once made
}

TEST(TrainingJobViewTest, DescribeCarriesResults) {
  const cairn::v1::Study s = JobStudy();
  json d = DescribeTrainingJobJson(s, nullptr);
  EXPECT_EQ(d["TrainingJobStatus"], "InProgress");
  EXPECT_EQ(d["SecondaryStatus"], "Starting");
  EXPECT_EQ(d["CreationTime"], 1700000000.0);
  EXPECT_EQ(d["ModelArtifacts"]["S3ModelArtifacts"],
            "s3://bkt/out/job-1/output/model.tar.gz");
  EXPECT_FALSE(d.contains("Tags"));
  Trial t;
  t.set_state(Trial::SUCCEEDED);
  t.mutable_end_time()->set_seconds(1700000100);
  auto* m = t.mutable_final_measurement()->add_metrics();
  m->set_metric_id("validation_loss");
  m->set_value(0.25);
  d = DescribeTrainingJobJson(s, &t);
  EXPECT_EQ(d["TrainingJobStatus"], "Completed");
  EXPECT_EQ(d["FinalMetricDataList"],
            json::parse(R"([{"MetricName": "validation:loss", "Value": 0.25,
                             "Timestamp": 1700000100.0}])"));
  t.set_state(Trial::FAILED);
  t.set_infeasible_reason("out of memory");
  EXPECT_EQ(DescribeTrainingJobJson(s, &t)["FailureReason"], "out of memory");
}

std::vector<json> Summaries() {
  return {json{{"TrainingJobName", "b-job"},
               {"CreationTime", 2.0},
               {"TrainingJobStatus", "Completed"}},
          json{{"TrainingJobName", "a-job"},
               {"CreationTime", 3.0},
               {"TrainingJobStatus", "InProgress"}},
          json{{"TrainingJobName", "c-other"},
               {"CreationTime", 1.0},
               {"TrainingJobStatus", "InProgress"}}};
}

std::vector<std::string> Names(const ListPage& page) {
  std::vector<std::string> out;
  for (const json& s : page.summaries) out.push_back(s["TrainingJobName"]);
  return out;
}

TEST(ListQueryTest, FiltersSortAndPages) {
  auto q = ParseListQuery("");  // CreationTime, Ascending: SageMaker's
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(Names(SelectPage(Summaries(), *q)),
            (std::vector<std::string>{"c-other", "b-job", "a-job"}));
  q = ParseListQuery(R"({"SortBy": "Name", "SortOrder": "Ascending",
                         "MaxResults": 2})");
  ASSERT_TRUE(q.ok());
  ListPage page = SelectPage(Summaries(), *q);
  EXPECT_EQ(Names(page), (std::vector<std::string>{"a-job", "b-job"}));
  q = ParseListQuery(json{
      {"SortBy", "Name"},
      {"SortOrder", "Ascending"},
      {"NextToken",
       page.next_token}}.dump());
  ASSERT_TRUE(q.ok());
  page = SelectPage(Summaries(), *q);
  EXPECT_EQ(Names(page), (std::vector<std::string>{"c-other"}));
  EXPECT_EQ(page.next_token, "");
  q = ParseListQuery(R"({"NameContains": "JOB", "StatusEquals": "InProgress",
                         "CreationTimeBefore": 5, "CreationTimeAfter": 1})");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(Names(SelectPage(Summaries(), *q)),
            (std::vector<std::string>{"a-job"}));
}

TEST(ListQueryTest, ATuningJobsListSortsByObjective) {
  std::vector<json> jobs = Summaries();
  jobs[0]["FinalHyperParameterTuningJobObjectiveMetric"] = {{"Value", 0.5}};
  jobs[1]["FinalHyperParameterTuningJobObjectiveMetric"] = {{"Value", 0.2}};
  auto q = ParseListQuery(R"({"HyperParameterTuningJobName": "t"})",
                          ListKind::kTuningTrainingJobs);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(Names(SelectPage(jobs, *q)),  // Name, Ascending
            (std::vector<std::string>{"a-job", "b-job", "c-other"}));
  q = ParseListQuery(R"({"SortBy": "FinalObjectiveMetricValue",
                         "SortOrder": "Descending"})",
                     ListKind::kTuningTrainingJobs);
  ASSERT_TRUE(q.ok()) << q.status();
  // A job without an objective value is not listed.
  EXPECT_EQ(Names(SelectPage(jobs, *q)),
            (std::vector<std::string>{"b-job", "a-job"}));
  for (const char* body :
       {R"({"NameContains": "a"})", R"({"SortBy": "Bogus"})"}) {
    auto bad = ParseListQuery(body, ListKind::kTuningTrainingJobs);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << body;
  }
  EXPECT_FALSE(ParseListQuery(R"({"SortBy": "FinalObjectiveMetricValue"})")
                   .ok());  // not for ListTrainingJobs
}

TEST(ListQueryTest, LastModifiedTimeFilters) {
  std::vector<json> jobs = Summaries();
  jobs[0]["LastModifiedTime"] = 10.0;
  jobs[1]["LastModifiedTime"] = 20.0;
  jobs[2]["LastModifiedTime"] = 30.0;
  auto q = ParseListQuery(
      R"({"LastModifiedTimeAfter": 15, "LastModifiedTimeBefore": 25})");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(Names(SelectPage(jobs, *q)), std::vector<std::string>{"a-job"});
  q = ParseListQuery(R"({"SortOrder": "Descending"})", ListKind::kTuningJobs);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->sort_by, "Name");
  EXPECT_EQ(q->name_key, "HyperParameterTuningJobName");
}

TEST(ListQueryTest, BadMembersNameFieldAndValue) {
  for (const auto& [body, says] :
       std::vector<std::pair<std::string, std::string>>{
           {R"({"MaxResults": 500})", "MaxResults '500'"},
           {R"({"NextToken": "tok-2"})", "NextToken 'tok-2'"},
           {R"({"StatusEquals": "Weird"})", "StatusEquals 'Weird'"},
           {R"({"SortBy": "Size"})", "SortBy 'Size'"},
           {R"({"Foo": 1})", "Foo '1'"},
           {R"({"WarmPoolStatusEquals": "InUse"})",
            "WarmPoolStatusEquals 'InUse': is not a ListTrainingJobs member"},
           {R"({"CreationTimeAfter": "x"})",
            "CreationTimeAfter '\\\"x\\\"': must be a timestamp"},
           {"[1]", "not a JSON object"}}) {
    auto q = ParseListQuery(body);
    ASSERT_FALSE(q.ok()) << body;
    EXPECT_NE(q.status().message().find(says), std::string::npos) << q.status();
  }
}

}  // namespace
}  // namespace cairn::sagemaker
