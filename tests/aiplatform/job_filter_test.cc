// aiplatform/job_filter.h: AI Platform's jobs.list filter, parsed and
// matched; every refusal names where the filter came from and stays short.
#include "aiplatform/job_filter.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;

Job MakeJob(const std::string& id, Job::State state, const std::string& team) {
  Job job;
  job.set_job_id(id);
  job.set_state(state);
  if (!team.empty()) (*job.mutable_labels())["team"] = team;
  return job;
}

// Whether `filter` parses and matches `job`; fails the test if it does not
// parse.
bool Matches(const std::string& filter, const Job& job) {
  absl::StatusOr<JobFilter> f = JobFilter::Parse(filter, "filter");
  EXPECT_TRUE(f.ok()) << filter << ": " << f.status();
  return f.ok() && f->Matches(job);
}

TEST(JobFilterTest, AiPlatformsDocumentedExamples) {
  const Job census = MakeJob("census_1", Job::SUCCEEDED, "");
  const Job rnn = MakeJob("rnn_7", Job::FAILED, "nlp");
  EXPECT_TRUE(Matches("", census));
  EXPECT_TRUE(Matches("  ", rnn));
  EXPECT_TRUE(Matches("jobId:census*", census));
  EXPECT_FALSE(Matches("jobId:census*", rnn));
  EXPECT_TRUE(Matches("jobId:rnn* AND state:FAILED", rnn));
  EXPECT_FALSE(Matches("jobId:rnn* AND state:SUCCEEDED", rnn));
  EXPECT_FALSE(Matches("jobId:rnn* AND state:FAILED", census));
}

TEST(JobFilterTest, FieldsOperatorsQuotesAndCase) {
  const Job job = MakeJob("rnn_7", Job::RUNNING, "nlp team");
  EXPECT_TRUE(Matches("jobId=rnn_7", job));
  EXPECT_FALSE(Matches("jobId=rnn", job));         // Exact without '*'.
  EXPECT_TRUE(Matches("JOBID : \"rnn_*\"", job));  // Spaces by the operator.
  EXPECT_TRUE(Matches("state = running", job));
  EXPECT_TRUE(Matches("labels.team=\"nlp team\"", job));
  EXPECT_TRUE(Matches("labels.team:nlp*", job));
  EXPECT_FALSE(Matches("labels.owner:*", job));  // No such label.
  EXPECT_TRUE(Matches("jobId:* AND labels.team:n* AND state:RUNNING", job));
}

TEST(JobFilterTest, StateFromTheRequestIsAndedIn) {
  const Job job = MakeJob("a", Job::QUEUED, "");
  EXPECT_TRUE(JobFilter().Matches(job));
  EXPECT_TRUE(JobFilter(Job::QUEUED).Matches(job));
  EXPECT_FALSE(JobFilter(Job::RUNNING).Matches(job));
  absl::StatusOr<JobFilter> f = JobFilter::Parse("jobId:a*", "filter");
  ASSERT_TRUE(f.ok());
  f->RequireState(Job::CANCELLED);
  EXPECT_FALSE(f->Matches(job));
}

TEST(JobFilterTest, MayMatchLeavesTheStateOut) {
  absl::StatusOr<JobFilter> f =
      JobFilter::Parse("jobId:rnn* AND state:FAILED", "filter");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->MayMatch(MakeJob("rnn_7", Job::STATE_UNSPECIFIED, "")));
  EXPECT_FALSE(f->Matches(MakeJob("rnn_7", Job::STATE_UNSPECIFIED, "")));
  EXPECT_FALSE(f->MayMatch(MakeJob("census_1", Job::FAILED, "")));
}

TEST(JobFilterTest, RefusesWhatItDoesNotServe) {
  std::string many = "jobId:a*";
  for (int i = 0; i < JobFilter::kMaxTerms; ++i) many += " AND state:QUEUED";
  const std::string huge(100000, 'x');
  for (const std::string& bad :
       {std::string("jobId:x OR state:FAILED"), std::string("NOT state:FAILED"),
        std::string("(state:FAILED)"), std::string("-state:FAILED"),
        std::string("state=DONE"), std::string("state="), std::string("x"),
        std::string("createTime>1"), std::string("jobId:a AND"),
        std::string("AND jobId:a"), std::string("jobId:a AND AND state:QUEUED"),
        std::string("jobId:a state:QUEUED"), std::string("jobId:\"a"),
        std::string("jobId:a\"b"), std::string("labels.=x"),
        std::string("name:x"), many, "jobId:" + huge}) {
    absl::StatusOr<JobFilter> f = JobFilter::Parse(bad, "--filter");
    ASSERT_FALSE(f.ok()) << bad.substr(0, 80);
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(f.status().message(), "--filter: \""))
        << f.status();
    EXPECT_LT(f.status().message().size(), 1024u) << bad.size();
  }
}

}  // namespace
}  // namespace cairn::aiplatform
