// See list_query.h.
#include "sagemaker/list_query.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

constexpr char kObjectiveKey[] = "FinalHyperParameterTuningJobObjectiveMetric";

// What a kind of List takes.
struct ListShape {
  const char* operation;
  std::vector<std::string> sort_keys;
  const char* default_sort;
  bool filters;  // NameContains and the time filters
};

const ListShape& ShapeOf(ListKind kind) {
  static const ListShape kTraining{"ListTrainingJobs",
                                   {"Name", "CreationTime", "Status"},
                                   "CreationTime",
                                   true};
  static const ListShape kTuning{"ListHyperParameterTuningJobs",
                                 {"Name", "CreationTime", "Status"},
                                 "Name",
                                 true};
  static const ListShape kTuningTraining{
      "ListTrainingJobsForHyperParameterTuningJob",
      {"Name", "CreationTime", "Status", "FinalObjectiveMetricValue"},
      "Name",
      false};
  switch (kind) {
    case ListKind::kTuningJobs:
      return kTuning;
    case ListKind::kTuningTrainingJobs:
      return kTuningTraining;
    default:
      return kTraining;
  }
}

absl::Status OneOf(const std::string& key, const std::string& text,
                   const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) {
    return absl::OkStatus();
  }
  return InvalidField(
      key, text, absl::StrCat("must be one of ", absl::StrJoin(allowed, " ")));
}

// The time filters: epoch seconds (boto3 sends a datetime as a number).
absl::Status ParseTime(const std::string& key, const json& v, ListQuery* q) {
  if (!v.is_number()) {
    return InvalidField(key, v.dump(), "must be a timestamp (epoch seconds)");
  }
  const double t = v.get<double>();
  if (key == "CreationTimeAfter") q->creation_after = t;
  if (key == "CreationTimeBefore") q->creation_before = t;
  if (key == "LastModifiedTimeAfter") q->modified_after = t;
  if (key == "LastModifiedTimeBefore") q->modified_before = t;
  return absl::OkStatus();
}

// Members every List takes.
absl::Status ParseCommon(const std::string& key, const json& v,
                         const std::string& text, ListQuery* q) {
  if (key == "MaxResults") {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
        v.get<int64_t>() > 100) {
      return InvalidField("MaxResults", text, "must be 1 to 100");
    }
    q->max_results = v.get<int>();
    return absl::OkStatus();
  }
  if (key == "NextToken") {
    if (!v.is_string() || !absl::SimpleAtoi(text, &q->offset) ||
        q->offset > 1000000) {
      return InvalidField("NextToken", text, "is not a token this list gave");
    }
    return absl::OkStatus();
  }
  if (key == "StatusEquals") {
    q->status_equals = text;
    return OneOf(key, text,
                 {"InProgress", "Completed", "Failed", "Stopping", "Stopped"});
  }
  if (key == "SortBy") {
    q->sort_by = text;
    return OneOf(key, text, ShapeOf(q->kind).sort_keys);
  }
  q->descending = text == "Descending";
  return OneOf(key, text, {"Ascending", "Descending"});
}

absl::Status ParseMember(const std::string& key, const json& v, ListQuery* q) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  const ListShape& shape = ShapeOf(q->kind);
  for (const char* common :
       {"MaxResults", "NextToken", "StatusEquals", "SortBy", "SortOrder"}) {
    if (key == common) return ParseCommon(key, v, text, q);
  }
  if (q->kind == ListKind::kTuningTrainingJobs &&
      key == "HyperParameterTuningJobName") {
    return absl::OkStatus();
  }
  if (shape.filters && key == "NameContains") {
    if (!v.is_string() || text.size() > 63) {
      return InvalidField(key, text, "must be a string of at most 63 bytes");
    }
    q->name_contains = text;
    return absl::OkStatus();
  }
  if (shape.filters &&
      (key == "CreationTimeAfter" || key == "CreationTimeBefore" ||
       key == "LastModifiedTimeAfter" || key == "LastModifiedTimeBefore")) {
    return ParseTime(key, v, q);
  }
  return InvalidField(
      key, text,
      absl::StrCat("is not a ", shape.operation, " member Cairn supports"));
}

bool Within(const json& s, const char* key, const std::optional<double>& after,
            const std::optional<double>& before) {
  if (!after && !before) return true;
  auto it = s.find(key);
  if (it == s.end() || !it->is_number()) return false;
  const double t = it->get<double>();
  return (!after || t > *after) && (!before || t < *before);
}

bool Selected(const json& s, const ListQuery& q) {
  if (q.sort_by == "FinalObjectiveMetricValue" && !s.contains(kObjectiveKey)) {
    return false;
  }
  return absl::StrContains(
             absl::AsciiStrToLower(s[q.name_key].get<std::string>()),
             absl::AsciiStrToLower(q.name_contains)) &&
         (q.status_equals.empty() || s[q.status_key] == q.status_equals) &&
         Within(s, "CreationTime", q.creation_after, q.creation_before) &&
         Within(s, "LastModifiedTime", q.modified_after, q.modified_before);
}

// The value a summary sorts by.
json SortValue(const json& s, const ListQuery& q) {
  if (q.sort_by == "Name") return s[q.name_key];
  if (q.sort_by == "Status") return s[q.status_key];
  if (q.sort_by == "FinalObjectiveMetricValue") {
    return s[kObjectiveKey]["Value"];
  }
  return s["CreationTime"];
}

}  // namespace

absl::StatusOr<ListQuery> ParseListQuery(absl::string_view body,
                                         ListKind kind) {
  ListQuery q;
  q.kind = kind;
  q.sort_by = ShapeOf(kind).default_sort;
  q.name_key = kind == ListKind::kTuningJobs ? "HyperParameterTuningJobName"
                                             : "TrainingJobName";
  q.status_key = kind == ListKind::kTuningJobs ? "HyperParameterTuningJobStatus"
                                               : "TrainingJobStatus";
  const json j = json::parse(body.empty() ? absl::string_view("{}") : body,
                             nullptr, false);
  if (!j.is_object()) {
    return absl::InvalidArgumentError("request body: not a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    if (absl::Status s = ParseMember(key, value, &q); !s.ok()) return s;
  }
  return q;
}

ListPage SelectPage(std::vector<json> summaries, const ListQuery& q) {
  summaries.erase(
      std::remove_if(summaries.begin(), summaries.end(),
                     [&q](const json& s) { return !Selected(s, q); }),
      summaries.end());
  std::stable_sort(summaries.begin(), summaries.end(),
                   [&](const json& a, const json& b) {
                     const json x = SortValue(a, q), y = SortValue(b, q);
                     return q.descending ? y < x : x < y;
                   });
  ListPage page;
  const size_t end =
      std::min(summaries.size(), q.offset + static_cast<size_t>(q.max_results));
  for (size_t i = q.offset; i < end; ++i) {
    page.summaries.push_back(summaries[i]);
  }
  if (end < summaries.size()) page.next_token = absl::StrCat(end);
  return page;
}

}  // namespace cairn::sagemaker
