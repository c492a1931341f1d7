// See cloudwatch_logs.h.
#include "sagemaker/cloudwatch_logs.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "jobs/job_command.h"
#include "jobs/job_logs.h"
#include "jobs/tf_config.h"
#include "sagemaker/aws_error.h"
#include "sagemaker/log_stream.h"
#include "sagemaker/tuning_job_view.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

// Message bytes in one response, as CloudWatch's "up to 1 MB".
constexpr int64_t kMaxResponseBytes = 1 << 20;

absl::Status BadToken(absl::string_view token) {
  return InvalidParameter("nextToken", token,
                          "is not a token cairnd gave for this request");
}

// A non-negative decimal int64.
std::optional<int64_t> ParseOffset(absl::string_view text) {
  int64_t v = 0;
  if (text.empty() || text.size() > 19 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(text, &v)) {
    return std::nullopt;
  }
  return v;
}

std::string StreamArn(const std::string& name) {
  return absl::StrCat(TrainingJobsLogGroupArn(), ":log-stream:", name);
}

json EventJson(const LogEvent& e) {
  return {{"timestamp", e.timestamp_ms},
          {"message", e.message},
          {"ingestionTime", e.timestamp_ms}};
}

// --- DescribeLogStreams ---

// The key streams are ordered and paged by.
std::string OrderKey(const DescribeLogStreamsRequest& r, const std::string& n,
                     int64_t last_ms) {
  if (!r.by_last_event_time) return n;
  return absl::StrFormat("%020d.%s", last_ms, n);
}

}  // namespace

absl::StatusOr<json> DescribeLogStreams(
    const DescribeLogStreamsRequest& request,
    const std::vector<TrainingLogStream>& streams) {
  std::vector<std::pair<std::string, json>> rows;
  for (const TrainingLogStream& s : streams) {
    if (!request.selection.Matches(s.name)) continue;
    absl::StatusOr<LogStreamFile> file =
        LogStreamFile::Open(s.log_path, s.finished);
    if (!file.ok()) return file.status();
    json row = {{"logStreamName", s.name},
                {"creationTime", s.creation_ms},
                {"arn", StreamArn(s.name)},
                {"storedBytes", 0}};
    const int64_t last = file->times().last_ms();
    if (file->end() > 0) {
      row["firstEventTimestamp"] = file->times().first_ms();
      row["lastEventTimestamp"] = last;
      row["lastIngestionTime"] = last;
    }
    rows.emplace_back(OrderKey(request, s.name, last), std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return request.descending ? a.first > b.first : a.first < b.first;
  });
  json page = json::array();
  std::string last_key;
  bool more = false;
  for (auto& [key, row] : rows) {
    if (!request.next_token.empty() &&
        (request.descending ? key >= request.next_token
                            : key <= request.next_token)) {
      continue;
    }
    if (static_cast<int>(page.size()) == request.limit) {
      more = true;
      break;
    }
    page.push_back(std::move(row));
    last_key = key;
  }
  json out = {{"logStreams", std::move(page)}};
  // No token when all fit: the SageMaker SDK loops while one comes back.
  if (more) out["nextToken"] = last_key;
  return out;
}

// --- GetLogEvents ---

absl::StatusOr<json> GetLogEvents(
    const GetLogEventsRequest& request,
    const std::vector<TrainingLogStream>& streams) {
  auto it = std::find_if(
      streams.begin(), streams.end(),
      [&](const TrainingLogStream& s) { return s.name == request.stream; });
  if (it == streams.end()) {
    return AwsStatus(absl::StatusCode::kNotFound, "ResourceNotFoundException",
                     "The specified log stream does not exist.");
  }
  absl::StatusOr<LogStreamFile> file =
      LogStreamFile::Open(it->log_path, it->finished);
  if (!file.ok()) return file.status();
  LogReadLimits limits;
  limits.max_events = request.limit;
  limits.max_bytes = kMaxResponseBytes;
  limits.start_ms = request.start_ms;
  limits.end_ms = request.end_ms;
  bool forward = request.start_from_head;
  std::optional<int64_t> at;
  if (!request.next_token.empty()) {
    const absl::string_view t = request.next_token;
    if (t.size() < 3 || (t[0] != 'f' && t[0] != 'b') || t[1] != '/') {
      return BadToken(t);
    }
    forward = t[0] == 'f';
    at = ParseOffset(t.substr(2));
    if (!at) return BadToken(t);
    absl::StatusOr<bool> ok = file->IsBoundary(*at);
    if (!ok.ok()) return ok.status();
    if (!*ok) return BadToken(t);
  }
  json out = {{"events", json::array()}};
  if (forward) {
    if (!at) {
      absl::StatusOr<int64_t> from = file->StartOfTime(request.start_ms);
      if (!from.ok()) return from.status();
      at = *from;
    }
    absl::StatusOr<LogPage> page = file->Forward(*at, limits);
    if (!page.ok()) return page.status();
    for (const LogEvent& e : page->events)
      out["events"].push_back(EventJson(e));
    out["nextForwardToken"] = absl::StrCat("f/", page->next);
    out["nextBackwardToken"] = absl::StrCat("b/", *at);
    return out;
  }
  if (!at) {
    absl::StatusOr<int64_t> before = file->end();
    if (request.end_ms != std::numeric_limits<int64_t>::max()) {
      before = file->StartOfTime(request.end_ms);
    }
    if (!before.ok()) return before.status();
    at = *before;
  }
  absl::StatusOr<LogPage> page = file->Backward(*at, limits);
  if (!page.ok()) return page.status();
  for (const LogEvent& e : page->events) out["events"].push_back(EventJson(e));
  out["nextForwardToken"] = absl::StrCat("f/", page->last_cut);
  out["nextBackwardToken"] = absl::StrCat("b/", page->next);
  return out;
}

// --- FilterLogEvents ---

namespace {

// An event's place in FilterLogEvents' order.
struct MergeKey {
  int64_t ms = 0;
  std::string stream;
  int64_t end = 0;
  bool operator<(const MergeKey& o) const {
    return std::tie(ms, stream, end) < std::tie(o.ms, o.stream, o.end);
  }
  std::string Token() const { return absl::StrCat(ms, ".", end, ".", stream); }
};

std::optional<MergeKey> ParseMergeToken(absl::string_view token) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(token, absl::MaxSplits('.', 2));
  if (parts.size() != 3 || parts[2].empty()) return std::nullopt;
  std::optional<int64_t> ms = ParseOffset(parts[0]);
  std::optional<int64_t> end = ParseOffset(parts[1]);
  if (!ms || !end) return std::nullopt;
  return MergeKey{*ms, std::string(parts[2]), *end};
}

struct Merged {
  MergeKey key;
  LogEvent event;
};

// Where stream `name` resumes after `token` (none: from startTime).
absl::StatusOr<int64_t> ResumeAt(const LogStreamFile& file,
                                 const std::string& name,
                                 const FilterLogEventsRequest& request,
                                 const std::optional<MergeKey>& token) {
  if (!token) return file.StartOfTime(request.start_ms);
  if (name == token->stream) {
    absl::StatusOr<bool> ok = file.IsBoundary(token->end);
    if (!ok.ok()) return ok.status();
    if (!*ok) return BadToken(request.next_token);
    return token->end;
  }
  const int64_t after = name < token->stream ? token->ms + 1 : token->ms;
  return file.StartOfTime(std::max(request.start_ms, after));
}

bool MatchesTerms(const std::string& message,
                  const std::vector<std::string>& terms) {
  return std::all_of(terms.begin(), terms.end(), [&](const std::string& t) {
    return message.find(t) != std::string::npos;
  });
}

// Reads each selected stream forward; `horizon` becomes the least place
// that some stream has not been read past (nullopt: all read to the end).
absl::StatusOr<std::vector<Merged>> ReadStreams(
    const FilterLogEventsRequest& request,
    const std::vector<TrainingLogStream>& streams,
    const std::optional<MergeKey>& token, std::optional<MergeKey>& horizon) {
  std::vector<Merged> out;
  LogReadLimits limits;
  limits.max_events = request.limit;
  limits.max_bytes = kMaxResponseBytes;
  limits.start_ms = request.start_ms;
  limits.end_ms = request.end_ms;
  for (const TrainingLogStream& s : streams) {
    if (!request.selection.Matches(s.name)) continue;
    absl::StatusOr<LogStreamFile> file =
        LogStreamFile::Open(s.log_path, s.finished);
    if (!file.ok()) return file.status();
    if (file->end() == 0 || file->times().last_ms() < request.start_ms) {
      continue;
    }
    absl::StatusOr<int64_t> from = ResumeAt(*file, s.name, request, token);
    if (!from.ok()) return from.status();
    absl::StatusOr<LogPage> page = file->Forward(*from, limits);
    if (!page.ok()) return page.status();
    for (LogEvent& e : page->events) {
      MergeKey key{e.timestamp_ms, s.name, e.end};
      out.push_back({std::move(key), std::move(e)});
    }
    if (page->done) continue;
    absl::StatusOr<int64_t> ms = file->TimeAt(page->next);
    if (!ms.ok()) return ms.status();
    MergeKey edge{*ms, s.name, page->next};
    if (!horizon || edge < *horizon) horizon = std::move(edge);
  }
  return out;
}

// eventId: the stream (64-bit FNV-1a of its name) and the event's end.
std::string EventId(const MergeKey& key) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key.stream) h = (h ^ c) * 1099511628211ull;
  return absl::StrFormat("%020u%020d", h, key.end);
}

}  // namespace

absl::StatusOr<json> FilterLogEvents(
    const FilterLogEventsRequest& request,
    const std::vector<TrainingLogStream>& streams) {
  std::optional<MergeKey> token;
  if (!request.next_token.empty()) {
    token = ParseMergeToken(request.next_token);
    if (!token) return BadToken(request.next_token);
  }
  std::optional<MergeKey> horizon;
  absl::StatusOr<std::vector<Merged>> events =
      ReadStreams(request, streams, token, horizon);
  if (!events.ok()) return events.status();
  std::sort(events->begin(), events->end(),
            [](const Merged& a, const Merged& b) { return a.key < b.key; });
  json out = {{"events", json::array()}, {"searchedLogStreams", json::array()}};
  int64_t bytes = 0;
  std::optional<MergeKey> last;
  bool cut = false;
  for (const Merged& m : *events) {
    if (horizon && *horizon < m.key) break;  // Not all read up to here.
    if (!MatchesTerms(m.event.message, request.terms)) {
      last = m.key;
      continue;
    }
    const int64_t size = static_cast<int64_t>(m.event.message.size());
    if (static_cast<int>(out["events"].size()) == request.limit ||
        (!out["events"].empty() && bytes + size > kMaxResponseBytes)) {
      cut = true;
      break;
    }
    bytes += size;
    json e = EventJson(m.event);
    e["logStreamName"] = m.key.stream;
    e["eventId"] = EventId(m.key);
    out["events"].push_back(std::move(e));
    last = m.key;
  }
  if (cut) {
    out["nextToken"] = last->Token();
  } else if (horizon) {
    out["nextToken"] = horizon->Token();
  }
  return out;
}

json DescribeLogGroups(const DescribeLogGroupsRequest& request) {
  json out = {{"logGroups", json::array()}};
  if (absl::string_view(kTrainingJobsLogGroup)
          .substr(0, request.prefix.size()) == request.prefix) {
    out["logGroups"].push_back({{"logGroupName", kTrainingJobsLogGroup},
                                {"creationTime", 0},
                                {"metricFilterCount", 0},
                                {"arn", TrainingJobsLogGroupArn() + ":*"},
                                {"storedBytes", 0}});
  }
  return out;
}

std::string LogsResponseBody(const json& response) {
  return response.dump(-1, ' ', false, json::error_handler_t::replace);
}

// --- Streams of a training job ---

std::string LogStreamName(absl::string_view job, int host,
                          int64_t epoch_seconds) {
  return absl::StrCat(job, "/algo-", host, "-", epoch_seconds);
}

absl::StatusOr<std::vector<TrainingLogStream>> TrainingJobStreams(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial) {
  std::vector<TrainingLogStream> out;
  if (trial.job().log_path().empty() || !trial.has_start_time()) return out;
  absl::StatusOr<cairn::v1::SageMakerCreateTrainingJobRequest> request =
      TrialTrainingRequest(study, trial);
  if (!request.ok()) return request.status();
  const std::vector<jobs::ReplicaTask> replicas =
      jobs::ExpandReplicas(study.spec().job_template());
  const int hosts = std::max(1, request->resource_config().instance_count());
  const int64_t epoch = trial.start_time().seconds();
  for (int i = 0; i < hosts; ++i) {
    TrainingLogStream s;
    s.name = LogStreamName(request->training_job_name(), i + 1, epoch);
    if (i == 0) {
      s.log_path = trial.job().log_path();
    } else if (i < static_cast<int>(replicas.size()) &&
               !trial.job().job_dir().empty()) {
      s.log_path =
          jobs::ReplicaLogPath(trial.job().job_dir(), replicas[i].Name());
    } else {
      continue;
    }
    s.creation_ms = epoch * 1000 + trial.start_time().nanos() / 1000000;
    s.finished = jobs::JobLogFinal(trial);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace cairn::sagemaker
