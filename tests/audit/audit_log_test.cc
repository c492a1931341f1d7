// AuditLog in a real RocksDB store with a clock the test moves: what is
// recorded, ids in time order (also within one microsecond and across a
// reopen), retention at open and while recording, filters and paging, and
// where the resource of a call comes from.
#include "audit/audit_log.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit/call_resource.h"
#include "cairn/v1/study_service.pb.h"
#include "gtest/gtest.h"
#include "store/verify.h"
#include "tests/testing/test_util.h"

namespace cairn::audit {
namespace {

namespace v1 = cairn::v1;

constexpr int kOk = 0;
constexpr int kNotFound = 5;
constexpr int kPermissionDenied = 7;
constexpr int kUnauthenticated = 16;
const char kCreate[] = "/cairn.v1.StudyService/CreateStudy";
const char kGet[] = "/cairn.v1.StudyService/GetStudy";

v1::AuditEvent Event(const std::string& principal, const std::string& method,
                     int code = kOk) {
  v1::AuditEvent e;
  e.set_principal(principal);
  e.set_method(method);
  e.set_code(code);
  return e;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen(AuditLogOptions options = AuditLogOptions()) {
    log_.reset();
    store_.reset();
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(StoreOptions(), dir_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options.now = [this] { return now_; };
    absl::StatusOr<std::unique_ptr<AuditLog>> log =
        AuditLog::Open(store_.get(), options);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = *std::move(log);
  }

  void Record(const v1::AuditEvent& e) { ASSERT_TRUE(log_->Record(e).ok()); }

  std::vector<v1::AuditEvent> All(AuditQuery query = AuditQuery()) {
    std::vector<v1::AuditEvent> events;
    do {
      absl::StatusOr<AuditPage> page = log_->List(query);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      events.insert(events.end(), page->events.begin(), page->events.end());
      query.page_token = page->next_page_token;
    } while (!query.page_token.empty());
    return events;
  }

  cairn::testing::TempDir dir_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  std::unique_ptr<Store> store_;
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, RecordsWritesAndRefusalsButNotReads) {
  EXPECT_TRUE(log_->ShouldRecord(kCreate, kOk));
  EXPECT_TRUE(log_->ShouldRecord(kCreate, kNotFound));
  EXPECT_TRUE(log_->ShouldRecord(kGet, kPermissionDenied));
  EXPECT_TRUE(log_->ShouldRecord(kGet, kUnauthenticated));
  EXPECT_TRUE(log_->ShouldRecord("/cairn.v1.AdminService/RevokeToken", kOk));
  EXPECT_FALSE(log_->ShouldRecord(kGet, kOk));
  EXPECT_FALSE(log_->ShouldRecord(kGet, kNotFound));
  EXPECT_FALSE(log_->ShouldRecord("/cairn.v1.AdminService/ListTokens", kOk));
  EXPECT_FALSE(log_->ShouldRecord("/grpc.health.v1.Health/Check", kOk));
  // Operations outside the permission table (SageMaker's) by the same rule.
  EXPECT_TRUE(log_->ShouldRecordOperation(true, kOk));
  EXPECT_TRUE(log_->ShouldRecordOperation(false, kPermissionDenied));
  EXPECT_FALSE(log_->ShouldRecordOperation(false, kOk));

  AuditLogOptions reads;
  reads.record_reads = true;
  Reopen(reads);
  EXPECT_TRUE(log_->ShouldRecord(kGet, kOk));
  EXPECT_TRUE(log_->ShouldRecord("/cairn.v1.AdminService/ListTokens", kOk));
  EXPECT_FALSE(log_->ShouldRecord("/grpc.health.v1.Health/Check", kOk));
  EXPECT_TRUE(log_->ShouldRecordOperation(false, kOk));
}

TEST_F(AuditLogTest, KeepsEveryFieldAndSetsTheTime) {
  v1::AuditEvent e = Event("alice", kCreate);
  e.set_role(v1::EDITOR);
  e.set_resource("studies/3");
  e.set_peer("ipv4:127.0.0.1:4242");
  e.set_message(std::string(1000, 'x'));
  Record(e);
  Reopen();
  const std::vector<v1::AuditEvent> events = All();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].principal(), "alice");
  EXPECT_EQ(events[0].role(), v1::EDITOR);
  EXPECT_EQ(events[0].method(), kCreate);
  EXPECT_EQ(events[0].resource(), "studies/3");
  EXPECT_EQ(events[0].peer(), "ipv4:127.0.0.1:4242");
  EXPECT_EQ(events[0].message().size(), kMaxAuditFieldChars);
  EXPECT_EQ(events[0].time().seconds(), absl::ToUnixSeconds(now_));
}

// Many events in one microsecond, and after a reopen with the clock set
// back: ids stay unique and in order, so nothing is overwritten.
TEST_F(AuditLogTest, SameTimeAndClockGoingBackLoseNothing) {
  for (int i = 0; i < 5; ++i) Record(Event(absl::StrCat("p", i), kCreate));
  now_ -= absl::Minutes(10);
  Reopen();
  Record(Event("p5", kCreate));
  const std::vector<v1::AuditEvent> events = All();
  ASSERT_EQ(events.size(), 6u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(events[i].principal(), absl::StrCat("p", i));
}

TEST_F(AuditLogTest, FiltersBySinceAndPrincipal) {
  Record(Event("alice", kCreate));
  now_ += absl::Hours(1);
  Record(Event("bob", kCreate));
  now_ += absl::Hours(1);
  Record(Event("alice", kGet, kPermissionDenied));

  AuditQuery alice;
  alice.principal = "alice";
  std::vector<v1::AuditEvent> events = All(alice);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].code(), kPermissionDenied);

  AuditQuery recent;
  recent.start_time = now_ - absl::Minutes(90);
  events = All(recent);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].principal(), "bob");

  recent.principal = "alice";
  EXPECT_EQ(All(recent).size(), 1u);
}

TEST_F(AuditLogTest, PagesCoverEverythingOnce) {
  for (int i = 0; i < 25; ++i) Record(Event(absl::StrCat("p", i), kCreate));
  AuditQuery query;
  query.page_size = 10;
  absl::StatusOr<AuditPage> first = log_->List(query);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->events.size(), 10u);
  EXPECT_FALSE(first->next_page_token.empty());
  const std::vector<v1::AuditEvent> events = All(query);
  ASSERT_EQ(events.size(), 25u);
  EXPECT_EQ(events[24].principal(), "p24");

  query.page_token = "nonsense";
  absl::StatusOr<AuditPage> bad = log_->List(query);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("page_token"), std::string::npos);
  query.page_token = "";
  query.page_size = -1;
  EXPECT_EQ(log_->List(query).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(AuditLogTest, RetentionDeletesOldEventsAtOpenAndWhileRecording) {
  AuditLogOptions options;
  options.retention = absl::Hours(24);
  options.purge_interval = absl::Hours(1);
  Reopen(options);
  Record(Event("old", kCreate));
  now_ += absl::Hours(20);
  Record(Event("newer", kCreate));
  now_ += absl::Hours(5);  // "old" is 25 h old now, "newer" 5 h.
  Reopen(options);         // Open deletes it.
  std::vector<v1::AuditEvent> events = All();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].principal(), "newer");

  now_ += absl::Hours(20);  // "newer" is 25 h old; the next Record purges.
  Record(Event("latest", kCreate));
  events = All();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].principal(), "latest");

  options.retention = absl::ZeroDuration();
  EXPECT_EQ(AuditLog::Open(store_.get(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Records within the purge interval carry no deletion: a purge at most
// once an interval.
TEST_F(AuditLogTest, PurgesAtMostOncePerInterval) {
  AuditLogOptions options;
  options.retention = absl::Minutes(10);
  options.purge_interval = absl::Hours(1);
  Reopen(options);
  Record(Event("a", kCreate));
  now_ += absl::Minutes(30);  // "a" expired, but the last purge was at open.
  Record(Event("b", kCreate));
  EXPECT_EQ(All().size(), 2u);
  now_ += absl::Minutes(31);
  Record(Event("c", kCreate));
  std::vector<v1::AuditEvent> events = All();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].principal(), "c");
}

// cairnd --verify (and --repair) know the a/ records: a store with audit
// events and a retention deletion verifies clean.
TEST_F(AuditLogTest, StoreWithEventsVerifiesClean) {
  Record(Event("alice", kCreate));
  ASSERT_TRUE(log_->Purge().ok());
  Record(Event("bob", kCreate));
  log_.reset();
  store_.reset();
  absl::StatusOr<VerifyReport> report = VerifyStore(dir_.path() + "/store");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->problems.empty()) << report->problems[0];
}

TEST(CallResourceTest, NamesTheResource) {
  v1::GetTrialRequest get;
  get.set_name("studies/1/trials/2");
  EXPECT_EQ(RequestResource(get), "studies/1/trials/2");
  v1::AddTrialMeasurementRequest add;
  add.set_trial_name("studies/1/trials/3");
  EXPECT_EQ(RequestResource(add), "studies/1/trials/3");
  v1::CreateTrialRequest create;
  create.set_parent("studies/1");
  EXPECT_EQ(RequestResource(create), "studies/1");
  v1::BackupRequest backup;
  backup.set_destination("/backups/x");
  EXPECT_EQ(RequestResource(backup), "/backups/x");
  EXPECT_EQ(RequestResource(v1::ListStudiesRequest()), "");
  v1::Trial made;
  made.set_name("studies/1/trials/4");
  EXPECT_EQ(ResponseResource(made), "studies/1/trials/4");
  EXPECT_EQ(ResponseResource(v1::SuggestTrialsResponse()), "");
}

}  // namespace
}  // namespace cairn::audit
