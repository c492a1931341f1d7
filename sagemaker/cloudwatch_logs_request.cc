// See cloudwatch_logs_request.h.
#include "sagemaker/cloudwatch_logs_request.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "sagemaker/aws_error.h"
#include "util/quote.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

constexpr size_t kMaxNameBytes = 512;
constexpr size_t kMaxTokenBytes = 1024;  // The model sets no maximum.

bool IsGroupNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '-' || c == '_' || c == '/' || c == '#';
}

bool IsIdentifierChar(char c) {
  return IsGroupNameChar(c) || c == '+' || c == '=' || c == ':' || c == ',' ||
         c == '@';
}

// A request body's members, each taken at most once by its reader; Done
// refuses whatever no reader took.
class Members {
 public:
  static absl::StatusOr<Members> Parse(absl::string_view body) {
    json j = json::parse(body, nullptr, false);
    if (!j.is_object()) {
      return InvalidParameter("request body", body.substr(0, 64),
                              "is not a JSON object");
    }
    return Members(std::move(j));
  }

  // Member `name` as a string of `min`..`max` bytes whose characters pass
  // `ok` (all when null); nullopt when absent.
  absl::StatusOr<std::optional<std::string>> String(
      const char* name, size_t min, size_t max, bool (*ok)(char) = nullptr) {
    const json* v = Take(name);
    if (v == nullptr) return std::optional<std::string>();
    if (!v->is_string()) {
      return InvalidParameter(name, v->dump(), "must be a string");
    }
    std::string s = v->get<std::string>();
    if (s.size() < min || s.size() > max) {
      return InvalidParameter(
          name, s, absl::StrCat("must be ", min, " to ", max, " characters"));
    }
    if (ok != nullptr && !std::all_of(s.begin(), s.end(), ok)) {
      return InvalidParameter(name, s, "holds a character the model refuses");
    }
    return std::optional<std::string>(std::move(s));
  }

  absl::StatusOr<std::optional<std::string>> StreamName(const char* name) {
    auto s = String(name, 1, kMaxNameBytes);
    if (s.ok() && s->has_value() &&
        (*s)->find_first_of(":*") != std::string::npos) {
      return InvalidParameter(name, **s, "may not hold ':' or '*'");
    }
    return s;
  }

  // An integer member in [min, max]; `fallback` when absent.
  absl::StatusOr<int64_t> Integer(const char* name, int64_t min, int64_t max,
                                  int64_t fallback) {
    const json* v = Take(name);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer()) {
      return InvalidParameter(name, v->dump(), "must be an integer");
    }
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(max)) {
      return InvalidParameter(name, v->dump(),
                              absl::StrCat("must be ", min, " to ", max));
    }
    const int64_t n = v->get<int64_t>();
    if (n < min || n > max) {
      return InvalidParameter(name, v->dump(),
                              absl::StrCat("must be ", min, " to ", max));
    }
    return n;
  }

  absl::StatusOr<bool> Bool(const char* name) {
    const json* v = Take(name);
    if (v == nullptr) return false;
    if (!v->is_boolean()) {
      return InvalidParameter(name, v->dump(), "must be true or false");
    }
    return v->get<bool>();
  }

  // A list of stream names (1..100); empty when absent.
  absl::StatusOr<std::vector<std::string>> StreamNames(const char* name) {
    const json* v = Take(name);
    std::vector<std::string> out;
    if (v == nullptr) return out;
    if (!v->is_array() || v->empty() || v->size() > 100) {
      return InvalidParameter(name, v->dump(),
                              "must be a list of 1 to 100 stream names");
    }
    for (const json& e : *v) {
      if (!e.is_string() || e.get<std::string>().empty() ||
          e.get<std::string>().size() > kMaxNameBytes ||
          e.get<std::string>().find_first_of(":*") != std::string::npos) {
        return InvalidParameter(name, e.dump(),
                                "holds a name that is not 1 to 512 "
                                "characters without ':' or '*'");
      }
      out.push_back(e.get<std::string>());
    }
    return out;
  }

  // Refuses the first member no reader took.
  absl::Status Done() const {
    for (const auto& [name, value] : j_.items()) {
      if (taken_.count(name) == 0) {
        return InvalidParameter(name, value.dump(),
                                "is not a member Cairn serves");
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit Members(json j) : j_(std::move(j)) {}
  const json* Take(const char* name) {
    taken_.insert(name);
    auto it = j_.find(name);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }

  json j_;
  std::set<std::string> taken_;
};

// logGroupName or logGroupIdentifier (exactly one), naming the group.
absl::Status CheckGroup(Members& m) {
  auto name = m.String("logGroupName", 1, kMaxNameBytes, IsGroupNameChar);
  if (!name.ok()) return name.status();
  auto id = m.String("logGroupIdentifier", 1, 2048, IsIdentifierChar);
  if (!id.ok()) return id.status();
  if (name->has_value() == id->has_value()) {
    return InvalidParameter("logGroupName", name->value_or(""),
                            "give either logGroupName or logGroupIdentifier");
  }
  const std::string& given = name->has_value() ? **name : **id;
  if (given == kTrainingJobsLogGroup ||
      (id->has_value() && given == TrainingJobsLogGroupArn())) {
    return absl::OkStatus();
  }
  return AwsStatus(
      absl::StatusCode::kNotFound, "ResourceNotFoundException",
      absl::StrCat("The specified log group does not exist: ",
                   util::QuoteForError(given), " (cairnd serves only ",
                   kTrainingJobsLogGroup, ")"));
}

// nextToken and limit (1 to `max_limit`, default `max_limit`).
absl::Status Paging(Members& m, int max_limit, std::string* token, int* limit) {
  auto t = m.String("nextToken", 1, kMaxTokenBytes);
  if (!t.ok()) return t.status();
  *token = t->value_or("");
  absl::StatusOr<int64_t> n = m.Integer("limit", 1, max_limit, max_limit);
  if (!n.ok()) return n.status();
  *limit = static_cast<int>(*n);
  return absl::OkStatus();
}

// startTime and endTime (epoch milliseconds).
absl::Status Times(Members& m, int64_t* start, int64_t* end) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  absl::StatusOr<int64_t> s = m.Integer("startTime", 0, kMax, 0);
  if (!s.ok()) return s.status();
  absl::StatusOr<int64_t> e = m.Integer("endTime", 0, kMax, kMax);
  if (!e.ok()) return e.status();
  *start = *s;
  *end = *e;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FilterTerms(absl::string_view p) {
  std::vector<std::string> terms;
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == ' ') {
      ++i;
      continue;
    }
    if (absl::string_view("?{[-%").find(p[i]) != absl::string_view::npos) {
      return InvalidParameter("filterPattern", p,
                              "Cairn serves only plain terms and \"quoted "
                              "phrases\" (no ?, -, %, {...} or [...])");
    }
    size_t end;
    if (p[i] == '"') {
      end = p.find('"', i + 1);
      if (end == absl::string_view::npos) {
        return InvalidParameter("filterPattern", p, "has an unclosed quote");
      }
      terms.emplace_back(p.substr(i + 1, end - i - 1));
      i = end + 1;
      continue;
    }
    end = std::min(p.find(' ', i), p.size());
    terms.emplace_back(p.substr(i, end - i));
    i = end;
  }
  terms.erase(std::remove(terms.begin(), terms.end(), ""), terms.end());
  return terms;
}

}  // namespace

std::string TrainingJobsLogGroupArn() {
  return absl::StrCat("arn:aws:logs:local:000000000000:log-group:",
                      kTrainingJobsLogGroup);
}

absl::Status InvalidParameter(absl::string_view member, absl::string_view value,
                              absl::string_view why) {
  return AwsStatus(
      absl::StatusCode::kInvalidArgument, "InvalidParameterException",
      absl::StrCat(member, ": ",
                   util::QuoteForError(util::ShortenForError(value, 200)), " ",
                   why));
}

bool StreamSelection::Matches(absl::string_view stream) const {
  if (!names.empty()) {
    return std::find(names.begin(), names.end(), stream) != names.end();
  }
  return absl::StartsWith(stream, prefix);
}

std::string StreamSelection::JobName() const {
  std::set<std::string> jobs;
  for (const std::string& n : names) jobs.insert(n.substr(0, n.find('/')));
  if (names.empty()) {
    const size_t slash = prefix.find('/');
    if (slash == std::string::npos) return "";
    jobs.insert(prefix.substr(0, slash));
  }
  return jobs.size() == 1 ? *jobs.begin() : "";
}

absl::StatusOr<DescribeLogStreamsRequest> ParseDescribeLogStreams(
    absl::string_view body) {
  absl::StatusOr<Members> m = Members::Parse(body);
  if (!m.ok()) return m.status();
  DescribeLogStreamsRequest r;
  if (absl::Status s = CheckGroup(*m); !s.ok()) return s;
  auto prefix = m->StreamName("logStreamNamePrefix");
  if (!prefix.ok()) return prefix.status();
  r.selection.prefix = prefix->value_or("");
  auto order = m->String("orderBy", 1, 32);
  if (!order.ok()) return order.status();
  if (order->has_value() && **order != "LogStreamName" &&
      **order != "LastEventTime") {
    return InvalidParameter("orderBy", **order,
                            "must be LogStreamName or LastEventTime");
  }
  r.by_last_event_time = order->value_or("") == "LastEventTime";
  if (r.by_last_event_time && prefix->has_value()) {
    return InvalidParameter("logStreamNamePrefix", **prefix,
                            "cannot be given with orderBy LastEventTime");
  }
  absl::StatusOr<bool> descending = m->Bool("descending");
  if (!descending.ok()) return descending.status();
  r.descending = *descending;
  if (absl::Status s = Paging(*m, 50, &r.next_token, &r.limit); !s.ok()) {
    return s;
  }
  if (absl::Status s = m->Done(); !s.ok()) return s;
  return r;
}

absl::StatusOr<GetLogEventsRequest> ParseGetLogEvents(absl::string_view body) {
  absl::StatusOr<Members> m = Members::Parse(body);
  if (!m.ok()) return m.status();
  GetLogEventsRequest r;
  if (absl::Status s = CheckGroup(*m); !s.ok()) return s;
  auto stream = m->StreamName("logStreamName");
  if (!stream.ok()) return stream.status();
  if (!stream->has_value()) {
    return InvalidParameter("logStreamName", "", "is required");
  }
  r.stream = **stream;
  if (absl::Status s = Times(*m, &r.start_ms, &r.end_ms); !s.ok()) return s;
  if (absl::Status s = Paging(*m, 10000, &r.next_token, &r.limit); !s.ok()) {
    return s;
  }
  absl::StatusOr<bool> head = m->Bool("startFromHead");
  if (!head.ok()) return head.status();
  r.start_from_head = *head;
  // Nothing is masked, so unmasking changes nothing.
  if (absl::StatusOr<bool> u = m->Bool("unmask"); !u.ok()) return u.status();
  if (absl::Status s = m->Done(); !s.ok()) return s;
  return r;
}

absl::StatusOr<FilterLogEventsRequest> ParseFilterLogEvents(
    absl::string_view body) {
  absl::StatusOr<Members> m = Members::Parse(body);
  if (!m.ok()) return m.status();
  FilterLogEventsRequest r;
  if (absl::Status s = CheckGroup(*m); !s.ok()) return s;
  auto names = m->StreamNames("logStreamNames");
  if (!names.ok()) return names.status();
  auto prefix = m->StreamName("logStreamNamePrefix");
  if (!prefix.ok()) return prefix.status();
  if (!names->empty() && prefix->has_value()) {
    return InvalidParameter("logStreamNamePrefix", **prefix,
                            "cannot be given with logStreamNames");
  }
  r.selection.names = *std::move(names);
  r.selection.prefix = prefix->value_or("");
  if (absl::Status s = Times(*m, &r.start_ms, &r.end_ms); !s.ok()) return s;
  auto pattern = m->String("filterPattern", 0, 1024);
  if (!pattern.ok()) return pattern.status();
  absl::StatusOr<std::vector<std::string>> terms =
      FilterTerms(pattern->value_or(""));
  if (!terms.ok()) return terms.status();
  r.terms = *std::move(terms);
  if (absl::Status s = Paging(*m, 10000, &r.next_token, &r.limit); !s.ok()) {
    return s;
  }
  // Events are always interleaved (AWS ignores the flag since 2019), and
  // nothing is masked.
  for (const char* flag : {"interleaved", "unmask"}) {
    if (absl::StatusOr<bool> b = m->Bool(flag); !b.ok()) return b.status();
  }
  if (absl::Status s = m->Done(); !s.ok()) return s;
  return r;
}

absl::StatusOr<DescribeLogGroupsRequest> ParseDescribeLogGroups(
    absl::string_view body) {
  absl::StatusOr<Members> m = Members::Parse(body.empty() ? "{}" : body);
  if (!m.ok()) return m.status();
  DescribeLogGroupsRequest r;
  auto prefix =
      m->String("logGroupNamePrefix", 1, kMaxNameBytes, IsGroupNameChar);
  if (!prefix.ok()) return prefix.status();
  r.prefix = prefix->value_or("");
  std::string token;
  if (absl::Status s = Paging(*m, 50, &token, &r.limit); !s.ok()) return s;
  if (!token.empty()) {
    return InvalidParameter("nextToken", token, "is not a token cairnd gave");
  }
  if (absl::Status s = m->Done(); !s.ok()) return s;
  return r;
}

}  // namespace cairn::sagemaker
