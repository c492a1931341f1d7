// See job_schedule.h.
#include "aiplatform/job_schedule.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using google::protobuf::util::TimeUtil;

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixNanos(TimeUtil::TimestampToNanoseconds(t));
}

absl::Duration ToDuration(const google::protobuf::Duration& d) {
  return absl::Nanoseconds(TimeUtil::DurationToNanoseconds(d));
}

}  // namespace

absl::Status ValidateScheduling(const cairn::v1::Scheduling& scheduling) {
  if (scheduling.has_max_running_time() &&
      ToDuration(scheduling.max_running_time()) <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trainingInput.scheduling.maxRunningTime: ",
                     TimeUtil::ToString(scheduling.max_running_time()),
                     " must be positive"));
  }
  if (scheduling.has_max_wait_time() && ToDuration(scheduling.max_wait_time()) <
                                            absl::Seconds(kMinMaxWaitSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trainingInput.scheduling.maxWaitTime: ",
        TimeUtil::ToString(scheduling.max_wait_time()), " is less than ",
        kMinMaxWaitSeconds, "s, its least value"));
  }
  return absl::OkStatus();
}

std::string ScheduleViolation(const Job& job, absl::Time now) {
  const cairn::v1::Scheduling& s = job.training_input().scheduling();
  if (job.state() == Job::RUNNING && job.has_start_time()) {
    const absl::Duration limit = s.has_max_running_time()
                                     ? ToDuration(s.max_running_time())
                                     : absl::Seconds(kDefaultMaxRunningSeconds);
    if (now - ToTime(job.start_time()) > limit) {
      return absl::StrCat("the job ran longer than scheduling.maxRunningTime (",
                          absl::FormatDuration(limit), ")");
    }
  }
  if ((job.state() == Job::QUEUED || job.state() == Job::PREPARING) &&
      s.has_max_wait_time() && job.has_create_time() &&
      now - ToTime(job.create_time()) > ToDuration(s.max_wait_time())) {
    return absl::StrCat("the job waited longer than scheduling.maxWaitTime (",
                        absl::FormatDuration(ToDuration(s.max_wait_time())),
                        ") without running");
  }
  return "";
}

}  // namespace cairn::aiplatform
